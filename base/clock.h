/* The two clocks corral reads: the monotonic one for every deadline and
 * duration (loop.h's timers take it), the wall clock only for times a person
 * or a log shipper reads (events, output lines, schedules). */
#pragma once

#include <stdint.h>

/* CLOCK_MONOTONIC in milliseconds. */
uint64_t monotonic_ms(void);

/* CLOCK_REALTIME in milliseconds since the epoch. */
uint64_t wall_clock_ms(void);

/* CLOCK_REALTIME in nanoseconds since the epoch (the event log's "time"
 * keeps that precision). */
uint64_t wall_clock_ns(void);

/* CLOCK_MONOTONIC in microseconds (sd_notify's MONOTONIC_USEC). */
uint64_t monotonic_us(void);
