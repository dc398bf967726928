#!/usr/bin/env python
"""Blitzer et al. (2007) multi-domain sentiment: train-domain x test-domain accuracy of
NBSVM and of plain hinge SGD, as in Table 2 of the Sol report (Fendrich 2012).

Four domains (books, dvd, electronics, kitchen), 1,000 positive and 1,000 negative Amazon
reviews each, read straight from the shared archives (tar members streamed, nothing
extracted). Two input routes:

- raw: the review text (title and body) of ``sorted_data_acl``, our tokenizer and hasher
  (word unigrams and bigrams in ``2**n_bits`` buckets);
- processed: the published ``processed_acl`` unigram/bigram counts, feature names hashed
  into ``2**n_bits`` buckets by the shared backend's reader and encoder.

Methods on each route: NBSVM (raw: :class:`nbsvm.NBSVMClassifier`; processed: the same
recipe from the library's pieces, NB log-count ratios of binarized hashed counts as feature
values, AdaGrad with log loss) and plain hinge SGD on binary features without NB weighting.

Split: in each domain the first 800 positive and the first 800 negative reviews in file
order train, the other 200 + 200 test (1,600 / 400). A row "all" trains on the union of the
four training parts. Settings (``min_df`` for NBSVM, ``lam`` for SGD) are chosen on a seeded
stratified 1,200 / 400 split of each training part, never on a test part. Then seeded
stratified 5-fold cross-validation over each domain's 2,000 reviews gives the in-domain mean
and standard deviation.

    python pipelines/blitzer.py [--seed 0] [--n-bits 20] [--epochs 10] [--folds 5]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import pandas as pd
from _harness import positive, script_parser

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import ROOT, markdown_table, shared_datasets, start, write_results  # noqa: E402
from blitzer_data import (  # noqa: E402
    DOMAINS,
    ROUTES,
    load_route,
    locate_archive,
)
from blitzer_experiments import (  # noqa: E402
    _shown,
    choose_setting,
    cross_domain,
    cross_validation,
    split_domains,
)
from blitzer_methods import methods  # noqa: E402
from blitzer_tables import (  # noqa: E402
    SOL_SPLIT,
    cv_table,
    data_notes,  # noqa: E402
    diagonal_table,
    domain_table,
    published_rows,
    settings_table,
    verdicts,
)

from nbsvm.config import DEFAULTS  # noqa: E402
from nbsvm.errors import NBSVMError  # noqa: E402

NAME = "blitzer"


# ---- main -------------------------------------------------------------------------------------


def parse_args(argv=None) -> argparse.Namespace:
    ap = script_parser(__doc__)
    ap.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seeds the learners' shuffles, the validation split and the folds",
    )
    ap.add_argument("--n-bits", type=int, default=20, help="hash buckets 2**n_bits")
    ap.add_argument("--ngrams", type=int, default=2, help="word n-grams 1..n (raw route)")
    ap.add_argument("--epochs", type=positive, default=10, help="passes of every learner")
    ap.add_argument("--folds", type=positive, default=5, help="cross-validation folds")
    ap.add_argument(
        "--train-per-class",
        type=int,
        default=800,
        help="first reviews of each label per domain that train",
    )
    ap.add_argument("--routes", default=",".join(ROUTES), help="raw, processed or both")
    ap.add_argument(
        "--raw-archive",
        type=Path,
        default=None,
        help="sorted_data_acl archive (default: the shared one, else download)",
    )
    ap.add_argument(
        "--processed-archive",
        type=Path,
        default=None,
        help="processed_acl archive (default: the shared one, else download)",
    )
    ap.add_argument("--out", type=Path, default=ROOT / "results", help="results folder")
    args = ap.parse_args(argv)
    args.routes = [r.strip() for r in args.routes.split(",") if r.strip()]
    bad = [r for r in args.routes if r not in ROUTES]
    if bad or not args.routes:
        ap.error(f"--routes takes {' and/or '.join(ROUTES)}, got {args.routes}")
    if args.epochs < 1 or args.folds < 2 or args.train_per_class < 4:
        ap.error(
            "need --epochs >= 1, --folds >= 2 and --train-per-class >= 4 (a quarter of "
            "each training part validates)"
        )
    if not 10 <= args.n_bits <= 28:
        ap.error(f"--n-bits must be in 10..28, got {args.n_bits}")
    return args


def configuration(args, archives: dict) -> dict:
    return dict(
        seed=args.seed,
        routes=",".join(args.routes),
        n_bits=args.n_bits,
        ngrams=args.ngrams,
        epochs=args.epochs,
        folds=args.folds,
        train_per_class=args.train_per_class,
        archives={r: str(p) for r, p in archives.items()},
        split=(
            f"per domain, the first {args.train_per_class} positive and the first "
            f"{args.train_per_class} negative reviews in file order train, the rest test; "
            f"'all' trains on the union of the four training parts"
        ),
        validation=(
            "settings chosen on a seeded stratified 3/4 : 1/4 split of each training "
            "part (mean over the domains), never on a test part"
        ),
        nbsvm_raw=(
            f"NBSVMClassifier(ngrams={args.ngrams}, n_bits={args.n_bits}, "
            f"epochs={args.epochs}, seed), other defaults ({DEFAULTS['loss']} loss, "
            f"{DEFAULTS['optimizer']}, eta0 {DEFAULTS['eta0']}, lambda {DEFAULTS['lam']}, "
            f"beta {DEFAULTS['beta']}); min_df chosen from 1, 2; text = title + body"
        ),
        sgd=(
            "SGDClassifier(loss='hinge', schedule='optimal', eta0=0.1, penalty='l2', "
            f"epochs={args.epochs}, seed) on binary hashed features (raw: unigram+bigram "
            "buckets; processed: feature counts binarized); lam chosen from 1e-5 to 1 "
            "(decades)"
        ),
        nbsvm_processed=(
            "NB log-count ratios (alpha 1) of binarized hashed processed_acl "
            "counts as feature values, SGDClassifier(loss='log', "
            f"schedule='adagrad', eta0={DEFAULTS['eta0']}, lam={DEFAULTS['lam']}, "
            f"epochs={args.epochs}); min_df chosen from 1, 2"
        ),
        cross_validation=f"{args.folds} seeded stratified folds over each domain's reviews",
    )


def run(args, argv: list | None = None) -> None:
    """The whole benchmark; ``argv`` (script first) is what the reproduce command shows."""
    archives = {
        r: locate_archive(r, getattr(args, f"{r}_archive"), shared_datasets()) for r in args.routes
    }
    config = start(NAME, configuration(args, archives), argv)
    ours = methods(args.routes)
    rows, validation, chosen = [], [], {}
    split = None
    for route in args.routes:
        t0 = time.perf_counter()
        data = load_route(archives[route], route, args.n_bits, args.ngrams, args.train_per_class)
        train, test = split_domains(data, args.train_per_class)
        split = f"{len(train[DOMAINS[0]])}/{len(test[DOMAINS[0]])}"
        print(
            f"\n== {route} route: {sum(map(len, data.values()))} reviews read in "
            f"{time.perf_counter() - t0:.1f} s; split {split} per domain",
            flush=True,
        )
        for method in (m for m in ours if m.route == route):
            print(f"\n-- {method.label}", flush=True)
            setting, tried = choose_setting(method, train, args)
            chosen[(method.name, method.route)] = _shown(setting)
            validation += tried
            print(f"    chosen: {_shown(setting)}", flush=True)
            rows += cross_domain(method, setting, train, test, args, split)
            rows += cross_validation(method, setting, data, args)
    frame = pd.DataFrame(rows + published_rows())
    report(frame, ours, args, split, validation, chosen, config)


def report(frame, ours, args, split, validation, chosen, config) -> None:
    """Print the tables and write ``results/blitzer.{csv,md}``."""
    tables = {}
    for m in ours:
        tables[f"{m.label}: train domain x test domain, {split} (accuracy %)"] = domain_table(
            frame, m.name, m.route, split
        )
    tables[f"Sol binary, Sol report Table 2 ({SOL_SPLIT}; accuracy %)"] = domain_table(
        frame, "Sol", "processed_stars (their features)", SOL_SPLIT
    )
    tables[f"In-domain (diagonal), {split}: published beside ours (accuracy %)"] = diagonal_table(
        frame, ours, split
    )
    tables[f"In-domain {args.folds}-fold cross-validation: mean +- std (accuracy %)"] = cv_table(
        frame, ours, args.folds
    )
    tables["Settings: validation accuracy on 1/4 of each training part (%)"] = settings_table(
        validation, chosen
    )
    for heading, table in tables.items():
        print(f"\n{heading}\n{table.to_string(index=False)}")
    found = verdicts(frame, args.routes, split, args.folds)
    picked = (
        "Chosen on validation: "
        + "; ".join(f"{name} ({route}) {setting}" for (name, route), setting in chosen.items())
        + "."
    )
    print("\n" + "\n".join(found + [picked]), flush=True)
    notes = data_notes(args) + [
        "## NBSVM against plain hinge SGD on the diagonal",
        "\n".join(f"- {line}" for line in found + [picked]),
    ]
    notes += [f"## {h}\n\n{markdown_table(t)}" for h, t in tables.items()]
    notes += ["## All figures (tidy; results/blitzer.csv)"]
    write_results(
        NAME,
        frame,
        "Blitzer et al. (2007) multi-domain sentiment: NBSVM and hinge "
        "SGD, train domain x test domain",
        notes=notes,
        config=config,
        out=args.out,
    )


def main(argv=None) -> int:
    args = parse_args(argv)
    try:
        run(args, None if argv is None else [__file__, *argv])
    except NBSVMError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
