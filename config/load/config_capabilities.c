/* `isolation.capabilities`: capability names -> a mask, starting from
 * Docker's default set.
 *
 * Names come from our own table, indexed by <linux/capability.h>, rather
 * than libcap's cap_from_name(): that one also takes numbers and stops at
 * the first character that is not a letter ("chown!" is chown), and a
 * table is what the "did you mean" suggestion needs anyway. */
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "base/suggest.h"
#include "config/load/config_parse.h"
#include "config/yaml/diagnostics.h"

static const char *const capabilities_keys[] = {"drop", "add", NULL};

/* Lowercase, without CAP_: how capabilities(7) lists them, less the
 * prefix every one shares (which would make every name look alike to the
 * suggestion). */
static const char *const capability_names[] = {
    [CAP_CHOWN] = "chown",
    [CAP_DAC_OVERRIDE] = "dac_override",
    [CAP_DAC_READ_SEARCH] = "dac_read_search",
    [CAP_FOWNER] = "fowner",
    [CAP_FSETID] = "fsetid",
    [CAP_KILL] = "kill",
    [CAP_SETGID] = "setgid",
    [CAP_SETUID] = "setuid",
    [CAP_SETPCAP] = "setpcap",
    [CAP_LINUX_IMMUTABLE] = "linux_immutable",
    [CAP_NET_BIND_SERVICE] = "net_bind_service",
    [CAP_NET_BROADCAST] = "net_broadcast",
    [CAP_NET_ADMIN] = "net_admin",
    [CAP_NET_RAW] = "net_raw",
    [CAP_IPC_LOCK] = "ipc_lock",
    [CAP_IPC_OWNER] = "ipc_owner",
    [CAP_SYS_MODULE] = "sys_module",
    [CAP_SYS_RAWIO] = "sys_rawio",
    [CAP_SYS_CHROOT] = "sys_chroot",
    [CAP_SYS_PTRACE] = "sys_ptrace",
    [CAP_SYS_PACCT] = "sys_pacct",
    [CAP_SYS_ADMIN] = "sys_admin",
    [CAP_SYS_BOOT] = "sys_boot",
    [CAP_SYS_NICE] = "sys_nice",
    [CAP_SYS_RESOURCE] = "sys_resource",
    [CAP_SYS_TIME] = "sys_time",
    [CAP_SYS_TTY_CONFIG] = "sys_tty_config",
    [CAP_MKNOD] = "mknod",
    [CAP_LEASE] = "lease",
    [CAP_AUDIT_WRITE] = "audit_write",
    [CAP_AUDIT_CONTROL] = "audit_control",
    [CAP_SETFCAP] = "setfcap",
    [CAP_MAC_OVERRIDE] = "mac_override",
    [CAP_MAC_ADMIN] = "mac_admin",
    [CAP_SYSLOG] = "syslog",
    [CAP_WAKE_ALARM] = "wake_alarm",
    [CAP_BLOCK_SUSPEND] = "block_suspend",
    [CAP_AUDIT_READ] = "audit_read",
    [CAP_PERFMON] = "perfmon",
    [CAP_BPF] = "bpf",
    [CAP_CHECKPOINT_RESTORE] = "checkpoint_restore",
};
#define CAPABILITY_COUNT (sizeof(capability_names) / sizeof(capability_names[0]))
_Static_assert(CAPABILITY_COUNT <= 64, "the mask has 64 bits");

#define BIT(capability) (UINT64_C(1) << (capability))

uint64_t capabilities_default(void)
{
	/* Docker's default set (moby's oci/caps/defaults.go), documented in
	 * docs/config.md. */
	return BIT(CAP_CHOWN) | BIT(CAP_DAC_OVERRIDE) | BIT(CAP_FSETID) | BIT(CAP_FOWNER) |
	       BIT(CAP_MKNOD) | BIT(CAP_NET_RAW) | BIT(CAP_SETGID) | BIT(CAP_SETUID) |
	       BIT(CAP_SETFCAP) | BIT(CAP_SETPCAP) | BIT(CAP_NET_BIND_SERVICE) |
	       BIT(CAP_SYS_CHROOT) | BIT(CAP_KILL) | BIT(CAP_AUDIT_WRITE);
}

static uint64_t capabilities_all(void)
{
	return CAPABILITY_COUNT == 64 ? UINT64_MAX : BIT(CAPABILITY_COUNT) - 1;
}

/* "NET_RAW", "cap_net_raw", "Cap_Net_Raw" -> its mask; "all" -> every
 * capability; 0 after reporting an unknown name. */
static uint64_t capability_mask(struct load_context *context, const yaml_node_t *node,
				const struct where *where)
{
	const char *text = expect_string(context, node, where);
	const char *bare = text, *suggestion;
	size_t length, bare_length;

	if (!text)
		return 0;
	length = node->data.scalar.length;
	if (strcasecmp(text, "all") == 0)
		return capabilities_all();
	if (length > 4 && strncasecmp(text, "cap_", 4) == 0)
		bare += 4;
	bare_length = length - (size_t)(bare - text);
	for (size_t i = 0; i < CAPABILITY_COUNT; i++) {
		if (strcasecmp(bare, capability_names[i]) == 0)
			return BIT(i);
	}
	suggestion = suggest_nearest(bare, bare_length, capability_names, CAPABILITY_COUNT);
	if (!suggestion) /* "al" */
		suggestion = suggest_nearest(text, length, (const char *const[]){"all"}, 1);
	if (suggestion)
		report(context, node, where, "unknown capability %s; did you mean \"%s\"?",
		       quote(text, length).text, suggestion);
	else
		report(context, node, where, "unknown capability %s (see capabilities(7))",
		       quote(text, length).text);
	return 0;
}

/* The union of a list's capabilities; false when any is wrong. */
static bool capability_list_mask(struct load_context *context, const yaml_node_t *node,
				 const struct where *where, uint64_t *out)
{
	bool valid = true;

	*out = 0;
	if (!expect_list(context, node, where, "a list of capability names such as [net_raw]"))
		return false;
	yaml_list_each(walk, context, node, where)
	{
		uint64_t mask;

		if (!walk.item)
			continue;
		mask = capability_mask(context, walk.item, &walk.where);
		if (!mask)
			valid = false;
		*out |= mask;
	}
	return valid;
}

bool capabilities_parse(struct load_context *context, const yaml_node_t *node,
			const struct where *where, uint64_t *out)
{
	struct map_entries fields;
	const yaml_node_t *field;
	char buffer[64];
	struct where field_where;
	uint64_t drop = 0, add = 0;
	bool valid = true;

	if (!expect_map(context, node, where, "a map such as {drop: [all], add: [net_raw]}"))
		return false;
	map_collect(context, node, where, "key", &fields);
	map_check_keys(context, &fields, where, capabilities_keys);
	if ((field = map_lookup(&fields, "drop"))) {
		field_where = where_field(where, "drop", buffer, sizeof(buffer));
		valid &= capability_list_mask(context, field, &field_where, &drop);
	}
	if ((field = map_lookup(&fields, "add"))) {
		field_where = where_field(where, "add", buffer, sizeof(buffer));
		valid &= capability_list_mask(context, field, &field_where, &add);
	}
	map_entries_free(&fields);
	/* Drop first, then add, as Docker does: a name in both is kept. */
	*out = (capabilities_default() & ~drop) | add;
	return valid;
}
