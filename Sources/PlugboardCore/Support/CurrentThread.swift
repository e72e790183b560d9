#if canImport(Glibc)
import Glibc
#endif

/// The calling thread's identity (its `pthread_t`), to tell whether a
/// thread is the one doing some work.
package func currentThreadIdentity() -> UInt {
    #if canImport(Glibc)
    UInt(pthread_self())
    #else
    UInt(bitPattern: pthread_self())
    #endif
}
