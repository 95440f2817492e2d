/* One CDI spec file (Container Device Interface, cdiVersion 0.3.0 to
 * 0.8.0) as data: its kind, its devices and the container edits of each,
 * and the edits shared by all of its devices.
 *
 * Parsing is a pure function over a buffer, so that it can be fuzzed. JSON
 * is YAML, so libyaml reads both kinds of spec file, and every mistake is
 * located (line:column) with its field path ("devices[0].containerEdits.
 * deviceNodes[1].permissions"). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/model/config.h"

/* A `deviceNodes` entry. Only what corral can honour is kept: it
 * bind-mounts the host's node, so the node's owner and mode are the host's
 * (fileMode, uid and gid are read and checked, then not used). */
struct cdi_device_node {
	char *path;      /* in the task */
	char *host_path; /* NULL: the same as path */
	char type;       /* 'c', 'b', 'u', 'p', or 0 when not written */
	bool has_major, has_minor;
	int64_t major, minor; /* when written, checked against the host's node */
	unsigned permissions; /* DEVICE_*; "rwm" when not written */
	struct source_location location;
};

/* A `mounts` entry, already in corral's terms. */
struct cdi_mount {
	struct mount_config mount;
	struct source_location location;
};

/* One `containerEdits` map. */
struct cdi_edits {
	char **env; /* NULL-terminated "NAME=VALUE", or NULL */
	struct cdi_device_node *device_nodes;
	size_t device_node_count;
	struct cdi_mount *mounts;
	size_t mount_count;
	/* What corral cannot apply, counted so that it can say so once. */
	size_t hook_count;
	size_t additional_gid_count; /* non-zero GIDs only: 0 is ignored by CDI too */
	bool has_intel_rdt;
};

struct cdi_device {
	char *name; /* "0", as written after '=' in VENDOR/CLASS=NAME */
	struct cdi_edits edits;
	struct source_location location;
};

struct cdi_spec {
	char *path;    /* for messages */
	char *version; /* "0.6.0" */
	char *kind;    /* "vendor.com/class" */
	struct cdi_device *devices;
	size_t device_count;
	struct cdi_edits edits; /* applied once when any device is used */
};

#define CDI_VERSION_OLDEST "0.3.0"
#define CDI_VERSION_NEWEST "0.8.0"

/* Parses `size` bytes read from `path` (used in messages only). On success
 * returns 0 and fills `out`; on failure returns -EINVAL, leaves `out` empty
 * and writes the first problem into `error` as "PATH:LINE:COLUMN: FIELD:
 * problem", with "(and N more problems)" when there are more. */
int cdi_spec_parse(const char *path, const char *buffer, size_t size, struct cdi_spec *out,
		   char *error, size_t error_size);

void cdi_spec_free(struct cdi_spec *spec);
