/* The two text formats GET /metrics answers in, and which one a scraper
 * asks for (its Accept header), as Prometheus' client libraries choose:
 *
 * - OpenMetrics 1.0.0 (application/openmetrics-text), what Prometheus
 *   asks for first since 2.5: counters' families named without _total,
 *   # UNIT lines, an info family, and "# EOF" at the end;
 * - Prometheus' text format 0.0.4 (text/plain), what everything else
 *   reads: curl, `promtool check metrics`, older agents. The same samples
 *   and values; only the metadata lines differ.
 *
 * Pure. */
#pragma once

#include <stddef.h>

enum metrics_format {
	METRICS_OPENMETRICS,
	METRICS_PROMETHEUS_TEXT,
};

/* The format accept[0..length) (an HTTP Accept header's value, as the
 * request holds it; length 0: no header) prefers: of application/openmetrics-text (version 1.0.0,
 * 0.0.1 or none) and text/plain (0.0.4, 1.0.0 or none; text/any and any/any stand for it), the one
 * of highest q; at equal q the one named first. Text when it names neither. */
enum metrics_format metrics_format_for_accept(const char *accept, size_t length);

/* The Content-Type header's value for `format`. */
const char *metrics_content_type(enum metrics_format format);
