// The floor the isolation bench compares with: two processes answering each
// other over a pipe pair, in C, with nothing else in the way.
#ifndef BENCH_FLOOR_H
#define BENCH_FLOOR_H
#include <stddef.h>
#include <stdint.h>

/// Forks a child that echoes `bytes`-byte messages over a pipe pair, makes
/// `rounds` round trips, and writes each one's nanoseconds to `samples`.
/// Returns 0, or an errno value.
int bench_pipe_pingpong(int rounds, size_t bytes, double *samples);

/// The same over shared memory: two mailboxes (a futex and the bytes),
/// each message copied in and out; the receiver spins up to `spin_ns`
/// before it sleeps on the futex. Returns 0, or an errno value.
int bench_shm_pingpong(int rounds, size_t bytes, uint64_t spin_ns, double *samples);

/// Pins the calling thread (and what it starts from now on) to one CPU,
/// the first it may run on; `bench_unpin` gives back the set it had.
/// Returns 0, or -1 when affinity cannot be set.
int bench_pin_to_one_cpu(void);
void bench_unpin(void);

#endif
