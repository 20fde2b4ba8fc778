/**
 * Latchkey's public API: {@link io.latchkey.LockClient}, {@link io.latchkey.DistributedLock},
 * {@link io.latchkey.Lease}, {@link io.latchkey.DistributedSemaphore} and its
 * {@link io.latchkey.SemaphoreLease}, {@link io.latchkey.MultiLock} and its {@link io.latchkey.MultiLease}, {@link io.latchkey.LockOptions} and the exceptions. It names no backend
 * type; the backend is chosen by the artifact on the class path and the URI's scheme. What every
 * backend promises, rule by rule, is the contract: {@code docs/contract.md} in the repository.
 *
 * <h2>Decisions where the design leaves room</h2>
 * <ul>
 *   <li>Options given in the URI's query override those given in code with
 *       {@link io.latchkey.LockClient#connect(java.net.URI, io.latchkey.LockOptions)}: the URI is
 *       deployment configuration, the code holds defaults.</li>
 *   <li>A thread that holds a lease which was lost, and asks for the same lock again, gets a
 *       {@link io.latchkey.LockLostException} rather than a nested lease on a lock it no longer holds,
 *       or a wait for itself: it must close the lost lease first.</li>
 *   <li>A lease taken with {@code tryLockAsync} belongs to no thread: every thread, the caller's
 *       included, waits for it like any other contender, and any thread may close it.</li>
 *   <li>When a lease is lost the client releases the lock in the backend at once, in the background
 *       (never a lock now held by someone else), so that other contenders need not wait for the
 *       backend's expiry. The lease stays open, and invalid, until the application closes it; until
 *       then the other threads of the same client keep waiting.</li>
 *   <li>{@link io.latchkey.Lease#close()} throws {@link io.latchkey.LockBackendUnavailableException}
 *       when the release did not reach the backend: the application learns that the lock stays
 *       taken until it expires. The lease is closed all the same and a second close does nothing.</li>
 *   <li>The default {@code safetyMargin} is a tenth of the lease, the default {@code timeout} five
 *       seconds.</li>
 *   <li>Lock names count Unicode code points: 255 emoji are a valid name. A name with an unpaired
 *       surrogate is refused, since no backend could store it faithfully.</li>
 *   <li>Semaphores: fencing tokens are per permit slot (a resource shared by N holders fences each
 *       slot, see {@link io.latchkey.SemaphoreLease}); there is no reentrancy, every
 *       {@code tryAcquire} takes another permit; a different number of permits for a name in use is an
 *       {@link IllegalArgumentException} naming both; at most 1000 permits; a backend without them
 *       refuses {@code semaphore()} with an {@link UnsupportedOperationException} naming it.</li>
 *   <li>Read-write locks ({@link io.latchkey.LockClient#readWriteLock}): each mode is a whole
 *       {@link io.latchkey.DistributedLock}; a read taken by the thread that holds the write lock nests
 *       in the write grant, so closing the write lease first downgrades without a gap, and the name stays
 *       exclusive until the read closes too (Curator lets other readers in at once; we prefer no new
 *       grant, so no round trip that could fail, in the middle of a downgrade); a write asked while the
 *       thread holds only a read is refused at once, as Curator and Redisson would wait for ever; each
 *       reading thread is a holder of its own at the backend, so that a writer waiting behind readers
 *       is never starved by one client's threads joining a read it already holds.</li>
 *   <li>Multi-locks ({@link io.latchkey.LockClient#multiLock(String...)}) are the client's ordinary
 *       locks taken in the order of {@link String#compareTo}, so every backend has them and their
 *       events are the locks'; a name given twice is refused, not merged; a lost lock invalidates the
 *       whole, and the others stay held until the multi-lease is closed, as a lost lock's lease stays
 *       open until closed; a thread's own lease of a name nests, as any {@code tryLock} does.</li>
 * </ul>
 */
package io.latchkey;
