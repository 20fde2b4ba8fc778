/**
 * The shared client layer and its helpers. Not for applications: nothing here is a stable API.
 */
package io.latchkey.internal;
