/**
 * The kafka backend of Latchkey.
 */
package io.latchkey.kafka;
