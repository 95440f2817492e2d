/* systemd's value syntaxes, read into what corral's config takes: time
 * spans ("1min 30s", "infinity"), sizes ("512M"), exit statuses, and
 * capability lists (systemd.time(7), systemd.resource-control(5),
 * systemd.exec(5)). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* 0 with *ms (rounded down; a bare number is seconds) and *infinite; -1
 * when it is no time span. */
int systemd_timespan_ms(const char *text, uint64_t *ms, bool *infinite);
/* corral's duration text of `ms` ("1m30s", "0"), in a static buffer. */
const char *duration_text(uint64_t ms);
/* A size with K, M, G, T, P or E (powers of 1024) or bytes: 0, or -1
 * (a percentage, a word). *infinite for "infinity". */
int systemd_size_bytes(const char *text, uint64_t *bytes, bool *infinite);
/* Capabilities as a mask (bit N: capability N), from "CAP_A CAP_B" or
 * "~CAP_A" (all but). -1 with the first unknown name in `unknown`. */
int systemd_capabilities(const char *text, uint64_t *mask, bool *inverted, char *unknown,
			 unsigned unknown_size);
/* The number of capabilities this libcap knows (the bits of "all"). */
unsigned capability_count(void);
/* "net_bind_service", the name corral's config takes, of capability N. */
const char *capability_config_name(unsigned capability);
