/**
 * The etcd backend of Latchkey.
 */
package io.latchkey.etcd;
