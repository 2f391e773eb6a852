/* SPDX-License-Identifier: MIT */
/* fuzz-lmkd: any datagram through lmkd_decode(): it either fails with one of
 * its documented errors or yields a request that encodes back to the same
 * bytes (the client encoder and the decoder agree on every layout). */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "lmkd-proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t out[LMKD_PACKET_MAX];
	struct lmkd_request req;
	const char *why = NULL;
	size_t len;
	int r = lmkd_decode(data, size, &req, &why);

	FUZZ_CHECK(why != NULL);
	if (r < 0) {
		FUZZ_CHECK(r == -ENODATA || r == -EMSGSIZE || r == -EBADMSG || r == -EPROTO || r == -ERANGE);
		FUZZ_CHECK(*why != '\0');
		return 0;
	}
	FUZZ_CHECK(req.cmd >= 0 && req.cmd < LMKD_CMD_COUNT && req.cmd != LMKD_PROCKILL &&
		   req.cmd != LMKD_KILL_OCCURRED);
	FUZZ_CHECK(req.cmd != LMKD_TARGET || req.target.n <= LMKD_TARGETS_MAX);
	FUZZ_CHECK(req.cmd != LMKD_PROCS_PRIO || req.procs.n <= LMKD_RECORDS_MAX);
	if (req.cmd == LMKD_PROCPRIO)
		FUZZ_CHECK(lmkd_prio_check(&req.prio, &why) == 0);
	len = lmkd_encode_request(out, &req);
	FUZZ_CHECK(len == size && memcmp(out, data, size) == 0);
	return 0;
}
