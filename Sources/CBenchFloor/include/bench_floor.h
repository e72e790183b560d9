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
// CPU time (both processes, ns) per round trip of the pipe ping-pong, the
// caller and its peer pinned to the CPUs given (-1: not pinned).
int bench_pipe_pingpong_cpu(int rounds, size_t bytes, int caller_cpu, int peer_cpu, double *cpu_ns);

int bench_pin_to_one_cpu(void);
// The CPUs this thread may run on (at most `max`), their count.
int bench_allowed_cpus(int *cpus, int max);
// Pins this thread to `cpu` (bench_unpin restores it), or one task (a thread id) of another process.
int bench_pin_thread_to(int cpu);
int bench_pin_task(int tid, int cpu);
void bench_unpin(void);

#endif
