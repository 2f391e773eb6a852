/* SPDX-License-Identifier: MIT */
/* lmkd-proto: decoding the lmkd socket's requests and encoding its replies
 * and kill reports, big-endian word by word. See lmkd-proto.h. */
#include <errno.h>
#include <string.h>

#include "lmkd-proto.h"

static int32_t get32(const uint8_t *p)
{
	return (int32_t)((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3]);
}

static uint8_t *put32(uint8_t *p, int32_t v)
{
	uint32_t u = (uint32_t)v;

	p[0] = (uint8_t)(u >> 24);
	p[1] = (uint8_t)(u >> 16);
	p[2] = (uint8_t)(u >> 8);
	p[3] = (uint8_t)u;
	return p + 4;
}

static uint8_t *put64(uint8_t *p, int64_t v)
{
	p = put32(p, (int32_t)(uint32_t)((uint64_t)v >> 32));
	return put32(p, (int32_t)(uint32_t)(uint64_t)v);
}

const char *lmkd_cmd_name(int cmd)
{
	static const char *const names[LMKD_CMD_COUNT] = {
		"TARGET", "PROCPRIO", "PROCREMOVE", "PROCPURGE", "GETKILLCNT", "SUBSCRIBE",
		"PROCKILL", "UPDATE_PROPS", "KILL_OCCURRED", "START_MONITORING", "BOOT_COMPLETED", "PROCS_PRIO",
	};

	return cmd >= 0 && cmd < LMKD_CMD_COUNT ? names[cmd] : "unknown";
}

int lmkd_prio_check(const struct lmkd_prio *p, const char **why)
{
	if (p->pid <= 0)
		*why = "pid is not positive";
	else if (p->adj < LMKD_ADJ_MIN || p->adj > LMKD_ADJ_MAX)
		*why = "oom_score_adj is outside [-1000, 1000]";
	else if (p->ptype != LMKD_PTYPE_APP && p->ptype != LMKD_PTYPE_SERVICE)
		*why = "process type is neither app (0) nor service (1)";
	else if (p->lmkd_only != 0 && p->lmkd_only != 1)
		*why = "the lmkd-only flag is neither 0 nor 1";
	else
		return 0;
	return -ERANGE;
}

/* width fields of one priority at w: pid, uid, adj[, ptype[, lmkd_only]] */
static void get_prio(const uint8_t *w, unsigned width, struct lmkd_prio *p)
{
	memset(p, 0, sizeof(*p));
	p->pid = get32(w);
	p->uid = get32(w + 4);
	p->adj = get32(w + 8);
	p->ptype = width >= 4 ? get32(w + 12) : LMKD_PTYPE_APP;
	p->lmkd_only = width >= 5 ? get32(w + 16) : 0;
}

/* PROCS_PRIO: 4-field records (4, 8, 12 words) or 5-field ones (5, 10, 15);
 * a bare command (0 words) is what a batch with nothing to send looks like. */
static int decode_procs(const uint8_t *w, unsigned fields, struct lmkd_request *req, const char **why)
{
	unsigned i, width = fields % 4 == 0 ? 4 : fields % 5 == 0 ? 5 : 0;

	req->procs.n = 0;
	req->procs.width = 0;
	if (fields == 0)
		return 0;
	if (!width || fields / width > LMKD_RECORDS_MAX) {
		*why = "not 1 to 3 records of 4 or 5 fields";
		return -EMSGSIZE;
	}
	req->procs.width = width;
	req->procs.n = fields / width;
	for (i = 0; i < req->procs.n; i++)
		get_prio(w + 4 * width * i, width, &req->procs.rec[i]);
	return 0;
}

/* The number of words each command must have after the command word;
 * TARGET and PROCS_PRIO vary and are judged by their decoders. */
static bool fields_ok(enum lmkd_cmd cmd, unsigned fields)
{
	switch (cmd) {
	case LMKD_TARGET:
		return fields % 2 == 0 && fields <= 2 * LMKD_TARGETS_MAX;
	case LMKD_PROCPRIO:
		return fields >= 3 && fields <= 5;
	case LMKD_PROCREMOVE:
	case LMKD_SUBSCRIBE:
		return fields == 1;
	case LMKD_GETKILLCNT:
		return fields == 2;
	case LMKD_PROCPURGE:
	case LMKD_UPDATE_PROPS:
	case LMKD_START_MONITORING:
	case LMKD_BOOT_COMPLETED:
		return fields == 0;
	default:
		return true;
	}
}

static int decode_args(const uint8_t *w, unsigned fields, struct lmkd_request *req, const char **why)
{
	unsigned i;
	int r;

	switch (req->cmd) {
	case LMKD_TARGET:
		req->target.n = fields / 2;
		for (i = 0; i < req->target.n; i++) {
			req->target.minfree[i] = get32(w + 8 * i);
			req->target.adj[i] = get32(w + 8 * i + 4);
		}
		return 0;
	case LMKD_PROCPRIO:
		get_prio(w, fields, &req->prio);
		return lmkd_prio_check(&req->prio, why);
	case LMKD_PROCREMOVE:
		req->pid = get32(w);
		return 0;
	case LMKD_GETKILLCNT:
		req->killcnt.min_adj = get32(w);
		req->killcnt.max_adj = get32(w + 4);
		return 0;
	case LMKD_SUBSCRIBE:
		r = get32(w);
		if (r < 0 || r >= LMKD_EVENT_COUNT) {
			*why = "event type is neither kill (0) nor stat (1)";
			return -ERANGE;
		}
		req->event = (enum lmkd_event)r;
		return 0;
	case LMKD_PROCS_PRIO:
		return decode_procs(w, fields, req, why);
	default:
		return 0;
	}
}

int lmkd_decode(const void *buf, size_t len, struct lmkd_request *req, const char **why)
{
	const uint8_t *p = buf;
	int32_t cmd;
	unsigned fields;

	memset(req, 0, sizeof(*req));
	*why = "";
	if (len == 0) {
		*why = "empty datagram";
		return -ENODATA;
	}
	if (len % 4 != 0 || len > LMKD_PACKET_MAX) {
		*why = len > LMKD_PACKET_MAX ? "longer than any packet" : "not a whole number of 32-bit words";
		return -EMSGSIZE;
	}
	cmd = get32(p);
	if (cmd < 0 || cmd >= LMKD_CMD_COUNT) {
		*why = "unknown command";
		return -EBADMSG;
	}
	if (cmd == LMKD_PROCKILL || cmd == LMKD_KILL_OCCURRED) {
		*why = "a command only the daemon sends";
		return -EPROTO;
	}
	req->cmd = (enum lmkd_cmd)cmd;
	fields = (unsigned)(len / 4 - 1);
	req->fields = fields;
	if (!fields_ok(req->cmd, fields)) {
		*why = "wrong length for the command";
		return -EMSGSIZE;
	}
	return decode_args(p + 4, fields, req, why);
}

size_t lmkd_encode_reply(uint8_t *buf, enum lmkd_cmd cmd, int32_t value)
{
	put32(put32(buf, (int32_t)cmd), value);
	return LMKD_REPLY_SIZE;
}

size_t lmkd_encode_prockill(uint8_t *buf, int32_t pid, int32_t uid, int32_t rss_kb, bool short_form)
{
	uint8_t *p = put32(put32(put32(buf, LMKD_PROCKILL), pid), uid);

	if (short_form)
		return LMKD_PROCKILL_SIZE_SHORT;
	put32(p, rss_kb);
	return LMKD_PROCKILL_SIZE;
}

size_t lmkd_encode_kill_occurred(uint8_t *buf, const struct lmkd_kill_stat *s)
{
	const int64_t wide[6] = { s->pgfault, s->pgmajfault, s->rss_bytes, s->cache_bytes, s->swap_bytes,
				  s->start_time_ns };
	const int32_t narrow[8] = { s->uid, s->oom_score, s->min_oom_score, s->free_mem_kb, s->free_swap_kb,
				    s->kill_reason, s->thrashing, s->max_thrashing };
	const char *name = s->taskname ? s->taskname : "";
	size_t n = strnlen(name, LMKD_TASKNAME_MAX), i;
	uint8_t *p = put32(buf, LMKD_KILL_OCCURRED);

	for (i = 0; i < 6; i++)
		p = put64(p, wide[i]);
	for (i = 0; i < 8; i++)
		p = put32(p, narrow[i]);
	*p++ = (uint8_t)(n >> 8);
	*p++ = (uint8_t)n;
	memcpy(p, name, n);
	p[n] = '\0';
	return LMKD_STAT_HEADER + n + 1;
}

void lmkd_taskname(const char *raw, size_t len, char *out, size_t size)
{
	size_t n = 0;

	if (!size)
		return;
	while (n < len && n < LMKD_TASKNAME_MAX && n + 1 < size && raw[n] && raw[n] != ' ')
		n++;
	memcpy(out, raw, n);
	out[n] = '\0';
}

static uint8_t *put_prio(uint8_t *p, const struct lmkd_prio *x, unsigned width)
{
	p = put32(put32(put32(p, x->pid), x->uid), x->adj);
	if (width >= 4)
		p = put32(p, x->ptype);
	if (width >= 5)
		p = put32(p, x->lmkd_only);
	return p;
}

size_t lmkd_encode_request(uint8_t *buf, const struct lmkd_request *req)
{
	uint8_t *p = put32(buf, (int32_t)req->cmd);
	unsigned i;

	switch (req->cmd) {
	case LMKD_TARGET:
		if (req->target.n > LMKD_TARGETS_MAX)
			return 0;
		for (i = 0; i < req->target.n; i++)
			p = put32(put32(p, req->target.minfree[i]), req->target.adj[i]);
		break;
	case LMKD_PROCPRIO:
		if (req->fields < 3 || req->fields > 5)
			return 0;
		p = put_prio(p, &req->prio, req->fields);
		break;
	case LMKD_PROCREMOVE:
		p = put32(p, req->pid);
		break;
	case LMKD_GETKILLCNT:
		p = put32(put32(p, req->killcnt.min_adj), req->killcnt.max_adj);
		break;
	case LMKD_SUBSCRIBE:
		p = put32(p, (int32_t)req->event);
		break;
	case LMKD_PROCS_PRIO:
		if (req->procs.n > LMKD_RECORDS_MAX || (req->procs.n && req->procs.width != 4 && req->procs.width != 5))
			return 0;
		for (i = 0; i < req->procs.n; i++)
			p = put_prio(p, &req->procs.rec[i], req->procs.width);
		break;
	case LMKD_PROCKILL:
	case LMKD_KILL_OCCURRED:
	case LMKD_CMD_COUNT:
		return 0;
	default:
		break;
	}
	return (size_t)(p - buf);
}

int lmkd_decode_reply(const void *buf, size_t len, enum lmkd_cmd cmd, int32_t *value)
{
	const uint8_t *p = buf;

	if (len != LMKD_REPLY_SIZE || get32(p) != (int32_t)cmd)
		return -EBADMSG;
	*value = get32(p + 4);
	return 0;
}
