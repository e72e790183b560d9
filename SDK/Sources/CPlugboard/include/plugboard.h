// The binary contract between a Plugboard host and a plugin.
//
// Everything here is read by the host *before* it runs any code written by the
// plugin author, so the layout is fixed by `PLUGBOARD_DESCRIPTOR_LAYOUT`:
// fields are only ever appended, and the layout number changes when they are.
#ifndef PLUGBOARD_H
#define PLUGBOARD_H

#include <stdint.h>

/// "PLGB" read as a little-endian 32-bit integer.
#define PLUGBOARD_DESCRIPTOR_MAGIC 0x42474C50u
/// Version of `plugboard_descriptor`'s layout.
#define PLUGBOARD_DESCRIPTOR_LAYOUT 1u

/// The SDK's ABI version. A plugin records the value it was *compiled* with;
/// the host accepts equal majors and a plugin minor no greater than its own.
/// Bump the minor for additive changes, the major for anything else (2.0:
/// the demo's interfaces left the SDK, one `ServiceError` replaced three enums).
#define PLUGBOARD_SDK_ABI_MAJOR 2u
#define PLUGBOARD_SDK_ABI_MINOR 3u
/// The SDK's release version (semantic version string).
#define PLUGBOARD_SDK_VERSION "2.3.0"

/// The one C symbol a plugin exports.
#define PLUGBOARD_ENTRY_SYMBOL "plugboard_entry"

/// One interface (extension point) a plugin provides.
typedef struct plugboard_interface {
    const char *_Nullable id;
    uint32_t major;
    uint32_t minor;
    uint32_t patch;
    uint32_t reserved;
} plugboard_interface;

/// When the host activates a plugin beyond the first lookup of an interface it
/// provides. Each trigger is a string: "startup", "route:<path prefix>" or
/// "event:<event name>". Read by the host's scanner process and cached, so
/// the host knows them without running the plugin.
typedef struct plugboard_activation {
    uint32_t count;
    uint32_t reserved;
    const char *_Nullable const *_Nullable triggers;
} plugboard_activation;

/// One plugin another builds on: its id, a version range ("1.2.0" means from
/// 1.2.0 within major 1; also "=1.2.3", ">=1.2.0 <3.0.0", "~1.2") and
/// whether the dependent runs without it. Read by the scanner and cached.
typedef struct plugboard_requirement {
    const char *_Nullable id;
    const char *_Nullable range;
    uint32_t optional;
    uint32_t reserved;
} plugboard_requirement;

typedef struct plugboard_requires {
    uint32_t count;
    uint32_t reserved;
    const plugboard_requirement *_Nullable entries;
} plugboard_requires;

/// What a plugin needs beyond a sandbox's defaults (SDK 2.3), each as
/// `SandboxNeed.encoded` spells it.
typedef struct plugboard_needs {
    uint32_t count;
    uint32_t reserved;
    const char *_Nullable const *_Nullable entries;
} plugboard_needs;

/// What `plugboard_entry` returns. Lives as long as the process.
typedef struct plugboard_descriptor {
    uint32_t magic;           // PLUGBOARD_DESCRIPTOR_MAGIC
    uint32_t layout_version;  // PLUGBOARD_DESCRIPTOR_LAYOUT
    uint32_t sdk_abi_major;   // captured when the plugin was compiled
    uint32_t sdk_abi_minor;
    const char *_Nullable sdk_version;    // PLUGBOARD_SDK_VERSION at plugin compile time
    const char *_Nullable toolchain;      // __clang_version__ of the plugin's compiler
    const char *_Nullable plugin_id;      // reverse-DNS, e.g. "com.example.greeter"
    const char *_Nullable plugin_version; // semantic version, e.g. "1.4.0"
    uint32_t provides_count;
    uint32_t services_count;
    const plugboard_interface *_Nullable provides;
    const char *_Nullable const *_Nullable services; // service ids the plugin asks for
    /// A +1 retained Swift object (`PluginExport.Factory`); the host takes it once.
    void *_Nullable factory;
    /// `plugboard_sdk_abi_marker()` as bound in the plugin: which SDK image it uses.
    const void *_Nullable sdk_marker;
    /// Activation triggers (was the first reserved slot: a plugin built before
    /// it existed leaves it null, which means "no triggers").
    const plugboard_activation *_Nullable activation;
    /// The plugins this one builds on (was the second reserved slot: SDK 2.2;
    /// null in plugins built before, which means "none").
    const plugboard_requires *_Nullable requires;
    /// What the plugin needs beyond a sandbox's defaults (was the first of
    /// two reserved slots: SDK 2.3; null in plugins built before, "none").
    const plugboard_needs *_Nullable needs;
    void *_Nullable reserved[1];
} plugboard_descriptor;

/// ABI markers. The SDK library defines one symbol per ABI version it
/// supports (`plugboard_sdk_abi_2_0`, later `_2_1`, ...). The inline function
/// below makes every plugin reference the marker of the SDK it was compiled
/// against, so the dynamic linker itself refuses a plugin built for a newer
/// SDK, and the host can read the plugin's SDK ABI from the file's undefined
/// symbols before loading it. When bumping the ABI, add a marker to
/// plugboard.c (keep the old ones for minor bumps) and point this at it.
extern const uint32_t plugboard_sdk_abi_2_0;
extern const uint32_t plugboard_sdk_abi_2_1;
extern const uint32_t plugboard_sdk_abi_2_2;
extern const uint32_t plugboard_sdk_abi_2_3;
static inline const void *_Nonnull plugboard_sdk_abi_marker(void) {
    return &plugboard_sdk_abi_2_3;
}

/// The compiler that compiles the *caller*: static inline on purpose, so that
/// inlined SDK code in a plugin records the plugin's toolchain, not the SDK's.
static inline const char *_Nonnull plugboard_compiler_fingerprint(void) {
    return __clang_version__;
}

#endif
