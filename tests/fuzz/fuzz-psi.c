/* SPDX-License-Identifier: MIT */
/* fuzz-psi: pressure-file text through psi_parse(), and each parsed total
 * through psi_format_trigger() into buffers too small and large enough. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "psi.h"

static void check_line(const struct psi_line *l)
{
	char small[8], big[64];
	int n;

	if (!l->present)
		return;
	FUZZ_CHECK(l->avg10 <= 10000 && l->avg60 <= 10000 && l->avg300 <= 10000);
	n = psi_format_trigger(big, sizeof(big), PSI_FULL, l->total_us, l->total_us);
	FUZZ_CHECK(n > 0 && (size_t)n == strlen(big));
	n = psi_format_trigger(small, sizeof(small), PSI_SOME, l->total_us, l->total_us);
	FUZZ_CHECK(n == -ENOSPC || (n > 0 && (size_t)n < sizeof(small)));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct psi_stats st;
	char *text = fuzz_text(data, size);
	int r = psi_parse(text, &st);

	FUZZ_CHECK(r == 0 || r == -EINVAL);
	if (r == 0) {
		FUZZ_CHECK(st.some.present);
		check_line(&st.some);
		check_line(&st.full);
	}
	free(text);
	return 0;
}
