#if PLUGBOARD_TESTING_FUTURE_SDK
// Exists only in the "future" SDK that Plugboard's tests build (see
// plugboard.h): API a plugin can use but a real host's SDK lacks.
public func futureOnlyAPI(_ value: Int) -> Int { value + 1 }
#endif
