/* What the sandbox importers of a unit share (import_systemd_sandbox.c,
 * import_systemd_mounts.c): the isolation map being written and what the
 * settings read so far imply. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "cli/import/import_systemd.h"
#include "cli/import/systemd_syscall_groups.h"

struct sandbox {
	struct systemd_unit *unit;
	struct ytree_node *isolation;
	struct ytree_node *mounts;
	unsigned namespaces; /* bits of namespace_names */
	struct syscall_set implied_deny;
	uint64_t capabilities_removed;
	bool no_new_privileges;
	bool any; /* a setting that needs isolation: */
};

enum { NS_PID, NS_MOUNT, NS_UTS, NS_IPC, NS_NET, NS_COUNT };

/* The last KEY of [Service] (NULL: not written), which makes isolation:
 * needed. */
struct unit_setting *sandbox_setting(struct sandbox *box, const char *key);
/* The same, when it is a boolean that is on. */
struct unit_setting *sandbox_enabled(struct sandbox *box, const char *key);

/* A mount: a bind of SOURCE at TARGET, or a tmpfs of MODE at TARGET. */
void sandbox_add_bind(struct sandbox *box, const char *source, const char *target, bool readonly);
void sandbox_add_tmpfs(struct sandbox *box, const char *target, const char *mode, bool readonly);

/* The file system: ProtectSystem=, ProtectHome=, *Paths=, BindPaths=,
 * TemporaryFileSystem=, DeviceAllow= into mounts:, readonly_rootfs and
 * devices: (import_systemd_mounts.c). */
void sandbox_import_mounts(struct sandbox *box);
