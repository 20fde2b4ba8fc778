/**
 * The Latchkey test kit: the contract every backend passes, run against real servers in
 * Testcontainers, with real faults and a history checker.
 */
package io.latchkey.testkit;
