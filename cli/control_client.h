/* The CLI's side of the control socket: connect, send one request, read
 * reply lines. (The server's side of a connection is its struct
 * control_client, in control_server_internal.h.) Errors are printed here,
 * in the words a person at the terminal needs ("is corral running?"), so
 * that every subcommand says them the same way. */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "supervisor/control/control_protocol.h"

struct control_connection {
	int fd;
	/* Set to an fd (a signalfd) whose readability means "stop waiting":
	 * reads then end with CONTROL_READ_INTERRUPTED. -1: none. */
	int interrupt_fd;
	/* -1, or where the items go (stdout): its reader going away ends a
	 * follow as an interrupt does. */
	int output_fd;
	/* Received bytes not yet handed out as lines: buffer[start, end). */
	char *buffer;
	size_t start, end, capacity;
	bool closed;    /* the server closed its side */
	int send_error; /* 0, or the errno of sending the request */
	/* The caller wants the raw line only (`status --json`): a reply that
	 * starts {"ok":true is not parsed (*reply stays NULL). Parsing a
	 * 1000-task status took two thirds of the CLI's time. */
	bool raw_when_ok;
};

enum control_read_result {
	CONTROL_READ_LINE,        /* *reply is an object; the caller decrefs it */
	CONTROL_READ_CLOSED,      /* the server closed the connection between lines */
	CONTROL_READ_INTERRUPTED, /* interrupt_fd became readable */
	CONTROL_READ_FAILED,      /* printed on stderr */
};

/* What a client command was told about its socket: --socket PATH and
 * -c CONFIG (--config), each NULL when not given. */
struct control_socket_choice {
	const char *socket_option;
	const char *config_path;
};

/* The getopt_long entries of --socket PATH and -c/--config CONFIG, which
 * every client command takes, and their handling: true when `option` was
 * one of them, now noted in `choice`. */
/* clang-format off */
#define CONTROL_SOCKET_OPTIONS \
	{"socket", required_argument, NULL, 's'}, {"config", required_argument, NULL, 'c'}
/* clang-format on */
bool control_socket_option(struct control_socket_choice *choice, int option, const char *argument);

/* The client commands' options that choose the socket, and the search, for
 * their --help: one text, as docs/cli.md says it. */
#define CONTROL_SOCKET_SEARCH_HELP                                                                 \
	"The socket: --socket PATH; else $CORRAL_SOCKET; else the socket: of -c CONFIG\n"          \
	"(a config without one: the default places); else the first of the default\n"              \
	"places that holds a socket: " CONTROL_SOCKET_DEFAULT ",\n"                                \
	"$XDG_RUNTIME_DIR/corral/control.sock, /tmp/corral-UID/control.sock.\n"

/* The same order as corral run's, where it listens: --socket PATH if
 * given, else $CORRAL_SOCKET if set and not empty, else the `socket:` of
 * -c CONFIG, else the first default place with a socket in it
 * (control_socket_places.h). NULL after saying on stderr why CONFIG cannot
 * be read. */
const char *control_socket_path(const struct control_socket_choice *choice);

/* Connects to `path`, held to control_socket_trust.h's rules: the fd, or
 * -errno after printing why ("corral: refusing PATH: the server runs as uid
 * 1002 (pid 77), not as root or as you (uid 1000)", or a connect error). */
int control_socket_connect(const char *path);

/* Connects to `path` and sends `request`. Returns 0, or -errno after printing
 * why, e.g. "corral: cannot connect to PATH: No such file or directory (is
 * corral running? set --socket or CORRAL_SOCKET)". */
int control_connection_open(struct control_connection *connection, const char *path,
			    const struct control_request *request);

/* Reads the next reply line and parses it. `raw`, when not NULL, receives
 * the line as sent (without its newline), valid until the next read. A
 * line that is not a JSON object is a failure. */
enum control_read_result control_connection_read(struct control_connection *connection,
						 json_t **reply, const char **raw);

/* Opens, sends, and reads the first reply, which says whether the request
 * was accepted: returns 0 with *reply set when it has "ok": true; prints
 * "corral: ERROR" and returns -1 when refused or when anything failed. The
 * connection stays open on success, for streams. */
int control_connection_call(struct control_connection *connection, const char *path,
			    const struct control_request *request, json_t **reply,
			    const char **raw);
/* The same, for a caller that prints the reply as it came: an accepted
 * one is not parsed, and *reply stays NULL (a refusal is parsed, said, and
 * -1 as above). */
int control_connection_call_raw(struct control_connection *connection, const char *path,
				const struct control_request *request, json_t **reply,
				const char **raw);

/* Sends one more request on an open connection (one connection carries
 * any number, one after the other): `corral top` asks for the status
 * every second on the same one. 0, or -errno (nothing printed). */
int control_connection_send(struct control_connection *connection,
			    const struct control_request *request);

void control_connection_close(struct control_connection *connection);

/* Prints the "error" of an {"ok": false, ...} reply as "corral: ERROR". */
void control_connection_print_refusal(const json_t *reply);
