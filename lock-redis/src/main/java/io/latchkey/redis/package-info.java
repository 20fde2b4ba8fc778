/**
 * The redis backend of Latchkey.
 */
package io.latchkey.redis;
