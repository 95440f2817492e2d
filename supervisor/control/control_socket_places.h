/* Where the control socket goes when no path is given (--socket,
 * CORRAL_SOCKET, socket:), in order of preference. /run is root's; a corral
 * that may not write there (a non-root USER, a read-only root file system)
 * takes the next place, and the CLI looks in the same places, in the same
 * order, so that `corral status` finds it without being told. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/un.h>

#define CONTROL_SOCKET_PLACES_MAX 3

struct control_socket_places {
	size_t count;
	char path[CONTROL_SOCKET_PLACES_MAX][sizeof(((struct sockaddr_un *)0)->sun_path)];
};

/* The path named for the socket: `option` (--socket PATH) when given,
 * else $CORRAL_SOCKET when set and not empty; NULL when neither is (then
 * the config's `socket:`, then the default places). corral run and the
 * CLI take the same order. */
const char *control_socket_given(const char *option);

/* /run/corral/control.sock; $XDG_RUNTIME_DIR/corral/control.sock when that
 * is set to an absolute path short enough for a socket; then
 * /tmp/corral-EUID/control.sock (tmux's way of sharing /tmp). */
void control_socket_places(struct control_socket_places *places);

/* The CLI's choice: the first place with a socket in it; else the first
 * place that could not be looked into (EACCES: corral's, but not ours to
 * reach, so the error names it); else the first place. */
const char *control_socket_find(const struct control_socket_places *places);

/* Whether `path` is one of the default places, however the CLI came by it
 * (found, or named with --socket): the CLI then holds its directory to the
 * server's rule (control_socket_trust.h). */
bool control_socket_is_default_place(const char *path);
