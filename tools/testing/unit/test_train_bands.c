// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of joules-train: frequency bands, in the library and through the command line.
 */
#include <gsl/gsl_multifit.h>

#include "csv.h"
#include "parse.h"
#include "train_util.h"

/* ---- frequency bands ---- */

static const char band_truth[] =
	"2000 4000000 1000 500 50000 10000 20000 15000 2000 40000000;"
	"max 9000000 1500 500 50000 10000 20000 15000 2000 55000000";

/* Largest relative error of band b of the model against the truth's. */
static double band_err(const struct jl_bands *m, unsigned int b,
		       const struct gen_opts *g, unsigned int *worst)
{
	double t[JL_NR_COEF];
	unsigned int i;

	for (i = 0; i < JL_NR_COEF; i++)
		t[i] = i == GEN_IDLE || !(i >= JL_F_NET_TX && !g->extra) ?
			       g->band_truth[b][i] :
			       0;
	return coef_err(&m->set[b], t, ALL_COEFS, worst);
}

/*
 * bands: edge found near the truth's, each band within 2%, beats one set
 * held out; one truth keeps one set
 */
TEST(bands)
{
	static struct jt_band_result br;
	struct jt_band_opts bo = { .max_bands = JL_MAX_BANDS };
	struct jt_report rep;
	struct gen_opts g;
	struct jt_row *rows, *before;
	unsigned int present, wi = 0, b;
	size_t n, i, known;
	double *mhz, e;
	int ret;

	gen_defaults(&g);
	g.n = 8000;
	g.noise = 0.003;
	CHECK(gen_parse_bands(&g, band_truth) == 0 && g.nbands == 2,
	      "truth parses");
	rows = gen_rows(&g, &n, &present);
	CHECK(n > 7900, "aligned %zu", n);

	/* Frequencies: recorded, and the same from cycles / cpu_ns. */
	mhz = malloc(n * sizeof(*mhz));
	known = jt_rows_freq(rows, n, present, mhz);
	CHECK(known == n, "every row has a frequency: %zu of %zu", known, n);
	for (i = 0; i < n; i++)
		rows[i].freq_mhz = 0;
	known = jt_rows_freq(rows, n, present, mhz);
	CHECK(known == n, "from cycles: %zu of %zu", known, n);
	CHECK(jt_rows_freq(rows, n, present & ~(1u << JL_F_CYCLES), mhz) == 0,
	      "neither: unknown");
	free(mhz);

	/* The bands' fits regroup the rows in place: they come back as they were. */
	before = malloc(n * sizeof(*before));
	memcpy(before, rows, n * sizeof(*rows));
	ret = train_banded(rows, n, present, &bo, &rep, &br);
	CHECK(ret == 0 && br.banded && br.model.nr == 2, "banded chosen: %d %s",
	      ret, br.why);
	CHECK(!memcmp(before, rows, n * sizeof(*rows)),
	      "the rows are back in their order after the bands' fits");
	free(before);
	CHECK(br.nb == 2 && br.upper_mhz[0] >= 1925 && br.upper_mhz[0] <= 2075,
	      "edge %llu near the true 2000 MHz",
	      (unsigned long long)br.upper_mhz[0]);
	CHECK(br.cv_banded.mape < 0.5 * br.cv_single.mape &&
		      br.cv_banded.n == br.cv_single.n,
	      "held out: banded %.3f%% vs single %.3f%% on %zu intervals",
	      br.cv_banded.mape, br.cv_single.mape, br.cv_banded.n);
	for (b = 0; b < br.model.nr; b++) {
		e = band_err(&br.model, b, &g, &wi);
		CHECK(e < 0.02, "auto: band %u %s off by %.2f%%", b,
		      jl_coef_names[wi], e * 100);
	}

	/* Fixed edges at the truth's. */
	bo.nedges = 1;
	bo.edges[0] = 2000;
	ret = train_banded(rows, n, present, &bo, &rep, &br);
	CHECK(ret == 0 && br.banded && br.model.upper_mhz[0] == 2000,
	      "fixed edge: %d %s", ret, br.why);
	for (b = 0; b < br.model.nr; b++) {
		e = band_err(&br.model, b, &g, &wi);
		CHECK(e < 0.02, "fixed: band %u %s off by %.2f%%", b,
		      jl_coef_names[wi], e * 100);
	}
	free(rows);

	/* One truth at every frequency: the single set stays. */
	gen_defaults(&g);
	g.n = 8000;
	bo.nedges = 0;
	rows = gen_rows(&g, &n, &present);
	ret = train_banded(rows, n, present, &bo, &rep, &br);
	CHECK(ret == 0 && !br.banded && br.model.nr == 1 &&
		      !memcmp(&br.model.set[0], &rep.model.coef,
			      sizeof(rep.model.coef)) &&
		      strstr(br.why, "not better"),
	      "frequency-independent truth keeps one set: %s", br.why);
	/* Even forced to bands, the rule still says single. */
	bo.max_bands = 3;
	bo.exact = 1;
	ret = train_banded(rows, n, present, &bo, &rep, &br);
	CHECK(ret == 0 && !br.banded, "--bands 3: %s", br.why);
	free(rows);
}

/* The CLI writes a banded model that jl_bands_parse() reads back. *
 * cli: banded output parses with jl_bands_parse, --bands 1, bad edges
 */
TEST(cli_bands)
{
	struct jl_bands b;
	struct gen_opts g;
	const char *p;
	int rc;

	TT_NEED_CLI("cli: banded output");
	gen_defaults(&g);
	g.n = 6000;
	g.noise = 0.003;
	gen_parse_bands(&g, band_truth);
	gen_files("sb.csv", "pb.csv", &g);
	rc = run_cli("-s sb.csv -p pb.csv -o model.txt -q");
	p = slurp_tmp("model.txt");
	CHECK(rc == 0 && p && !jl_bands_parse(p, strlen(p), &b) && b.nr == 2,
	      "banded output parses: %d %s", rc, cli_err);
	CHECK(p && strstr(p, "# written: 2 bands"), "says why");
	CHECK(b.set[1].idle_uw > 54000000 && b.set[1].idle_uw < 56000000,
	      "upper band's idle %llu", (unsigned long long)b.set[1].idle_uw);
	free((void *)p);
	/* --apply goes to model/bands (a file here: the generation stays). */
	{
		char cmd[1024];

		snprintf(
			cmd, sizeof(cmd),
			"mkdir -p '%s/fk/model' && echo 1 > '%s/fk/model/generation' "
			"&& : > '%s/fk/model/bands'",
			tmpdir, tmpdir, tmpdir);
		rc = system(cmd);
	}
	rc = run_cli("-s sb.csv -p pb.csv --apply --sysfs fk");
	p = slurp_tmp("fk/model/bands");
	CHECK(rc == 3 && strstr(cli_err, "stayed at 1") && p &&
		      !jl_bands_parse(p, strlen(p), &b) && b.nr == 2,
	      "--apply wrote model/bands: %d %s", rc, cli_err);
	free((void *)p);
	rc = run_cli("-s sb.csv -p pb.csv --bands 1");
	CHECK(rc == 4 || rc == 0, "--bands 1: %d", rc);
	CHECK(strstr(cli_out, "single set (--bands 1)") &&
		      cli_coef(&(struct jl_coef){ 0 }),
	      "--bands 1 writes one set");
	rc = run_cli("-s sb.csv -p pb.csv --band-edges 3000,2000");
	CHECK(rc == 2 && strstr(cli_err, "ascending"), "bad edges: %d %s", rc,
	      cli_err);
	/* No frequency at all: said, and one set written. */
	g.nbands = 0;
	gen_files("sb.csv", "pb.csv", &g);
	rc = run_cli("-s sb.csv -p pb.csv --bands 2");
	CHECK(rc == 0 && cli_coef(&(struct jl_coef){ 0 }) &&
		      strstr(cli_err, "banded model not written"),
	      "--bands 2 on one truth: %d %s", rc, cli_err);
}

TT_MAIN("test_train_bands")
