/* A restore's document: the keeper's records (kept_records.h) put back
 * together into one hand-over document, as `corral upgrade` writes one,
 * so that one reader takes back both (docs/decisions.md, "corral
 * outlives its own death"). corral's own part is the root; the groups'
 * record gives "groups" and "supervisor"; each task's record is one of
 * "tasks", with "restore_unsettled" (why) when the keeper holds a state
 * its task had left, or lost one of its fds. Each record's blobs are
 * copied into the document and its fds listed. */
#pragma once

#include <stddef.h>

#include "supervisor/keeper/kept_records.h"

struct handover_reader;

/* The document, ready to read in `document` (never written out: the
 * process that builds it reads it), 0; or -EINVAL with `error` (no
 * record of corral's own part: nothing can be taken back). */
int restore_document_build(const struct kept_records *records, struct handover_reader *document,
			   char *error, size_t error_size);
