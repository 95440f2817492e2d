#include "isolation/own_privileges.h"

#include <stdbool.h>
#include <stdio.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <unistd.h>

#define BIT(capability) (1ull << (capability))

static unsigned last_capability(void)
{
	int bits = cap_max_bits();
	return bits > 0 && bits <= 64 ? (unsigned)bits - 1 : 63;
}

uint64_t own_permitted_capabilities(void)
{
	static bool known;
	static uint64_t permitted;
	if (known)
		return permitted;
	cap_t capabilities = cap_get_proc();
	for (unsigned cap = 0; capabilities && cap <= last_capability(); cap++) {
		cap_flag_value_t value;
		if (cap_get_flag(capabilities, (cap_value_t)cap, CAP_PERMITTED, &value) == 0 &&
		    value == CAP_SET)
			permitted |= BIT(cap);
	}
	cap_free(capabilities);
	known = true;
	return permitted;
}

uint64_t own_bounding_set(void)
{
	uint64_t bounding = 0;
	for (unsigned cap = 0; cap <= last_capability(); cap++)
		if (prctl(PR_CAPBSET_READ, cap, 0, 0, 0) == 1)
			bounding |= BIT(cap);
	return bounding;
}

static const char *namespace_list(unsigned namespaces, char *buffer, size_t size)
{
	static const char *const names[] = {"pid", "mount", "uts", "ipc", "net", "cgroup"};
	size_t used = 0;
	buffer[0] = '\0';
	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (namespaces & (1u << i)) {
			int written = snprintf(buffer + used, size - used, "%s%s", used ? ", " : "",
					       names[i]);
			if (written < 0 || (size_t)written >= size - used)
				break;
			used += (size_t)written;
		}
	return buffer;
}

int own_privileges_check(const struct isolation_config *config, uint64_t keep, char *error,
			 size_t error_size)
{
	uint64_t permitted = own_permitted_capabilities();
	unsigned uid = (unsigned)geteuid();
	char names[64];
	unsigned namespaces =
	    config->namespaces | (isolation_has_own_network(config) ? ISOLATION_NS_NET : 0);

	if (namespaces && !(permitted & BIT(CAP_SYS_ADMIN))) {
		snprintf(error, error_size,
			 "isolation: namespaces %s need cap_sys_admin, which corral (uid %u) "
			 "does not have: run corral with it, or add user to namespaces (with "
			 "isolation.user maps)",
			 namespace_list(namespaces, names, sizeof(names)), uid);
		return -1;
	}
	if (config->network == NETWORK_BRIDGE && !(permitted & BIT(CAP_NET_ADMIN))) {
		snprintf(error, error_size,
			 "isolation: network mode bridge needs cap_net_admin, which corral (uid "
			 "%u) does not have",
			 uid);
		return -1;
	}
	/* With no_new_privs no exec can gain a capability, so a bounding set
	 * corral cannot trim (no cap_setpcap) gives the task nothing; without
	 * it, a setuid binary could. */
	if (!config->no_new_privileges && !(permitted & BIT(CAP_SETPCAP)) &&
	    (own_bounding_set() & ~keep)) {
		snprintf(error, error_size,
			 "isolation: no_new_privileges: false needs cap_setpcap, to drop the "
			 "capabilities the task does not keep from its bounding set, and corral "
			 "(uid %u) does not have it: keep no_new_privileges: true",
			 uid);
		return -1;
	}
	return 0;
}
