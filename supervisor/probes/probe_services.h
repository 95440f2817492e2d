/* What probes take from the supervisor running them: its loop, the spawn
 * path's slots, corral's network namespace, and the resolver of host
 * names (made at the first name, freed when corral exits). Part of the
 * tasks' services (tasks/services.h), which probes do not see. */
#pragma once

struct loop;
struct name_resolver;
struct network_host;
struct spawn_slots;

struct probe_services {
	struct loop *loop;
	struct spawn_slots *spawn_slots;
	struct network_host *network;
	struct name_resolver *resolver; /* NULL until the first name */
};
