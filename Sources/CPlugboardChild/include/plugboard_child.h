#ifndef PLUGBOARD_CHILD_H
#define PLUGBOARD_CHILD_H

/// Whether this process was started by a host as an isolated plugin's child
/// (`PLUGBOARD_CHILD`): then the constructor in child.c has taken over and
/// `main` is never reached. 0 when someone ran `plugboard-child` by hand.
int plugboard_child_started_by_host(void);

#endif
