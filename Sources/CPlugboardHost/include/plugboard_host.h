// C helpers the host needs from glibc that Swift's Glibc module hides
// (they need _GNU_SOURCE).
#ifndef PLUGBOARD_HOST_H
#define PLUGBOARD_HOST_H

/// The file of the loaded image containing `address` (dladdr), or NULL.
/// The string belongs to the dynamic linker; copy it.
const char *_Nullable plugboard_image_path(const void *_Nullable address);

#endif
