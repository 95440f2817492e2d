/* The hand-over of `corral upgrade`: what one corral writes for the
 * corral it execs into (the same pid), and how the other reads it.
 *
 * The document lives in a memfd that survives the exec, its number in
 * $CORRAL_HANDOVER_FD:
 *
 *     8 bytes: the length of the JSON text, little-endian
 *     the JSON text (jansson): every value that is not a byte string
 *     the blobs: byte strings (a partial output line, a ring of recent
 *     lines, a client's unsent reply), which JSON strings cannot carry
 *     as they are; the JSON names each by {"at": OFFSET, "length": N}
 *
 * Every fd handed over stays open across the exec (FD_CLOEXEC cleared on
 * exactly those) and is listed in the document's "fds", so that a corral
 * that cannot read the document (and falls back to the old binary) knows
 * which ones to keep open again. Like systemd's serialization
 * (daemon-reexec: key=value text and an fd set), but one JSON object. */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The format of the document. A corral refuses to exec a binary whose
 * `corral upgrade-format` says another number. */
#define HANDOVER_FORMAT 1

/* Set for the new corral: the memfd. */
#define HANDOVER_FD_ENV "CORRAL_HANDOVER_FD"
/* Set by a new corral that could not take the state over, for the old
 * binary it execs back into: why, for the log and the requester. */
#define HANDOVER_FAILED_ENV "CORRAL_HANDOVER_FAILED"

struct handover_writer {
	json_t *root;
	char *blobs;
	size_t blob_length, blob_capacity;
	int *fds; /* every fd handed over, for the "fds" list */
	size_t fd_count;
	/* A record for corral's keeper (kept_state.c), not an exec's
	 * document: what changes with every line (a partial line, the
	 * recent lines, stdout's pending bytes) is left out. */
	bool for_restore;
};

void handover_writer_init(struct handover_writer *writer);
void handover_writer_free(struct handover_writer *writer);
/* {"at", "length"} of a copy of `data` in the blob area. */
json_t *handover_blob(struct handover_writer *writer, const void *data, size_t length);
/* `fd` as a JSON number, noted for the list (negative: null, not noted). */
json_t *handover_fd(struct handover_writer *writer, int fd);
struct handover_reader;

/* The whole document as bytes (malloc'd, `*length`), laid out as in the
 * memfd: a keeper's record. */
char *handover_writer_bytes(struct handover_writer *writer, size_t *length);
/* A document's bytes read back (copied); as handover_reader_open. */
int handover_reader_open_bytes(struct handover_reader *reader, const void *data, size_t length,
			       char *error, size_t error_size);
/* A memfd with the whole document, not close-on-exec: its fd, or -errno. */
int handover_writer_seal(struct handover_writer *writer);
/* FD_CLOEXEC off (`keep`) or on again on every fd noted. */
void handover_fds_keep_open(const int *fds, size_t count, bool keep);

struct handover_reader {
	json_t *root;
	char *data; /* the whole document */
	size_t length;
	const char *blobs;
	size_t blob_length;
	int *fds; /* from the document's "fds" */
	size_t fd_count;
};

/* Reads the memfd (from offset 0). 0, or -errno/-EINVAL with `error`. */
int handover_reader_open(struct handover_reader *reader, int fd, char *error, size_t error_size);
/* The document `writer` built, read as it is, never written out: its
 * root, blobs and fds move into `reader` and `writer` is left empty (a
 * restore's document, built and read by one process). */
void handover_reader_take_writer(struct handover_reader *reader, struct handover_writer *writer);
void handover_reader_free(struct handover_reader *reader);
/* The bytes of a blob value: false when it does not lie in the area. */
bool handover_blob_get(const struct handover_reader *reader, const json_t *blob, const char **data,
		       size_t *length);
/* An integer member, or `fallback` when it is missing. */
int64_t handover_int(const json_t *object, const char *key, int64_t fallback);
bool handover_bool(const json_t *object, const char *key);
/* A string member, or NULL. */
const char *handover_string(const json_t *object, const char *key);
/* An fd member, -1 when missing or null; one not in the "fds" list is
 * refused (-1) so that a wrong document cannot name any fd of ours. */
int handover_fd_get(const struct handover_reader *reader, const json_t *object, const char *key);
