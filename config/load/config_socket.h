/* The one key a client command needs from a config: `socket:`, for
 * `corral status -c CONFIG` (docs/cli.md, "Controlling a running corral"). */
#pragma once

#include <stddef.h>

/* The top-level `socket:` of the config at `path` (a file, or a directory
 * whose *.yaml and *.yml files are read in name order, as
 * config_load_paths reads them), read without the rest: no group is
 * checked, so a config with an error elsewhere still names its socket. A
 * value with a `$` (interpolate: true) is read through the whole config,
 * which replaces the variables. 1 with the path in `socket`, 0 when no
 * file names one, or -errno (-EINVAL for a config that cannot be read as
 * one) with `error`. */
int config_read_socket(const char *path, char *socket, size_t socket_size, char *error,
		       size_t error_size);
