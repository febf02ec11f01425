"""``orbitkernels`` command line: demo, reproduce, bench, report, datasets.

Thin by design: it parses, calls the library, and shows progress (tqdm on
stderr, silenced by ``--quiet``); ``--json`` prints machine-readable results on
stdout. ``--quiet`` and ``--json`` may come before or after the subcommand.

Errors in what the user gave (a path that cannot be written, a missing or
malformed data or results file: the ``OSError`` family and the library's
:class:`~orbitkernels.utils.errors.UserError`) become one
``orbitkernels: error: ...`` line on stderr and exit status 1; anything else is a
bug and keeps its traceback.
"""
from __future__ import annotations

import argparse
import numbers
import os
import signal
import sys
import threading

from ._version import __version__
from .utils.errors import UserError
from .utils.io import dumps
from .utils.progress import set_quiet


def _print_json(obj):
    print(dumps(obj, indent=1))


def _round(value, digits=4):
    """``value`` with every float rounded to ``digits`` significant digits, for people to read
    (0.9823000000000001 -> 0.9823); --json keeps the stored numbers as they are."""
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, list, tuple, dict)):
        return value
    if isinstance(value, dict):
        return {k: _round(v, digits) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_round(v, digits) for v in value]
    if isinstance(value, numbers.Integral):
        return int(value)
    return float(f"{float(value):.{digits}g}")


def _fmt(value, digits=4):
    v = _round(value, digits)
    return f"{v:g}" if isinstance(v, float) else str(v)


def _cmd_demo(args):
    from .demo import run_demo

    result = run_demo(out_dir=args.out, seed=args.seed, quick=args.quick, verbose=not args.json)
    if args.json:
        _print_json(result)
    else:
        print(f"\nwrote {result['png']} and {result['json']}")
    return 0


def _how_to_get(exc, download=False):
    """One line saying where the missing data were looked for and how to get them."""
    from .datasets import REGISTRY

    where = f"data not found in {exc.data_home}" if exc.data_home else "data not found"
    info = REGISTRY.get(exc.dataset)
    if info is not None:  # the alternatives, not every file of both: either form of the dataset is enough
        forms = [", ".join(f.name for f in info.files(form)) for form in ("converted", "canonical") if info.files(form)]
        missing = f": needs {' or '.join(forms)}"
    else:
        missing = f" (missing {', '.join(exc.missing)})" if exc.missing else ""
    if download and getattr(exc, "failure", None):  # --download was given: say why it did not help
        how = f"downloading failed ({exc.failure}); put the files there; `orbitkernels datasets` lists what is needed"
    elif exc.urls:
        how = "rerun with --download to fetch it, or put the files there; `orbitkernels datasets` lists what is needed"
    else:
        how = "put the files there; `orbitkernels datasets` lists what is needed and where to find it"
    return f"{where}{missing}; {how}"


def _cmd_reproduce(args):
    from .experiments import PAPERS, get_experiments

    if args.paper not in PAPERS:
        print(f"orbitkernels: error: unknown paper {args.paper!r}; choose one of: {', '.join(sorted(PAPERS))}",
              file=sys.stderr)
        return 2
    try:
        experiments = get_experiments(args.paper)
    except ImportError as exc:
        print(f"orbitkernels: error: the {args.paper} reproduction is not available in this build: {exc}",
              file=sys.stderr)
        return 2
    if args.list:
        if args.json:
            _print_json(list(experiments))
        else:
            print("\n".join(experiments))
        return 0
    names = list(experiments) if args.experiment in (None, "all") else [args.experiment]
    unknown = [n for n in names if n not in experiments]
    if unknown:
        print(f"orbitkernels: error: unknown experiment {unknown[0]!r} for {args.paper}; "
              f"choose from: {', '.join(experiments)}",
              file=sys.stderr)
        return 2
    from .datasets import DatasetNotFoundError
    from .experiments import _runner
    from .utils.errors import NoMatchingCellsError

    results, skipped, unmatched = {}, {}, {}
    for name in names:
        try:
            with _runner.recording_resumed_files() as resumed:
                res = experiments[name](quick=args.quick, out_dir=args.out, resume=not args.no_resume, seed=args.seed,
                                        download=args.download)
        except _runner.StoredCellError:
            raise
        except (TypeError, KeyError, IndexError, AttributeError) as exc:
            if not resumed:
                raise  # nothing was read back: a bug, with its traceback
            # a kept cell of the wrong type (a string where a mapping was) failed deep in the experiment's code
            kept = ", ".join(str(p) for p in resumed)
            raise _runner.StoredCellError(
                f"{args.paper}/{name} failed on the cells kept from {kept} ({type(exc).__name__}: {exc}): a cell "
                "there is damaged or was edited; delete that file or run again with --no-resume (a fresh run that "
                "fails the same way is a bug of orbitkernels)") from exc
        except DatasetNotFoundError as exc:
            # "all of a paper's experiments": the ones whose data are here run, the others are named
            skipped[name] = _how_to_get(exc, download=args.download)
            print(f"skipped: {args.paper}/{name} ({skipped[name]})", file=sys.stderr)
            continue
        except NoMatchingCellsError as exc:
            if len(names) == 1:
                raise
            # a cell filter aimed at one experiment of the paper: the others have nothing to compute
            unmatched[name] = skipped[name] = str(exc)
            print(f"skipped: {args.paper}/{name} ({exc})", file=sys.stderr)
            continue
        results[name] = res
        if not args.json:
            print(f"\n{args.paper} / {name}: {_fmt(res.get('wall_time_s', '?'), 3)} s")
            for cell in res.get("headline", []):
                paper = "—" if cell.get("paper") is None else _fmt(cell["paper"])
                print(f"  {cell['name']}: ours {_fmt(cell['ours'])}   paper {paper}   ({cell['better']} is better)")
    if args.json:
        out = results if len(names) > 1 else next(iter(results.values()), None)
        if skipped:
            out = {"results": results, "skipped": skipped}
        _print_json(out)
    if not results:
        if unmatched and len(unmatched) == len(skipped):
            print(f"orbitkernels: error: ORBITKERNELS_RAJ2017_CELLS matches no cell of any experiment of {args.paper}",
                  file=sys.stderr)
        else:
            missing = [n for n in skipped if n not in unmatched]
            print(f"orbitkernels: error: no experiment of {args.paper} could run: the data of "
                  f"{', '.join(missing)} are missing", file=sys.stderr)
        return 1
    return 0


def _cmd_bench(args):
    try:
        from .bench import BENCHMARKS, run_benchmarks
    except ImportError as exc:
        print(f"benchmarks are not available in this build: {exc}", file=sys.stderr)
        return 2
    unknown = [n for n in args.name or () if n not in BENCHMARKS]
    if unknown:  # a usage error, said here: the library's ValueError would be a traceback at this boundary
        print(f"orbitkernels: error: unknown benchmark(s) {', '.join(unknown)}; choose from "
              f"{', '.join(sorted(BENCHMARKS))}", file=sys.stderr)
        return 2
    result = run_benchmarks(names=args.name or None, quick=args.quick, out_dir=args.out)
    if args.json:
        _print_json(result)
    else:
        for name, res in (result or {}).items():
            print(f"{name}: {res.get('summary', '') if isinstance(res, dict) else res}")
    return 0


def _cmd_report(args):
    import importlib
    from pathlib import Path

    from .bench import render_markdown as bench_markdown
    from .experiments import PAPERS, page_of
    from .experiments.report import (PROBES_PAGE, has_marked_block, render_probes, render_readme_block,
                                     render_results, update_marked_block, write_page)

    from .experiments._runner import default_results_dir

    # as reproduce: a results root set by $ORBITKERNELS_RESULTS was "results folder 'results' does not exist"
    results, docs = (Path(args.results) if args.results is not None else default_results_dir()), Path(args.docs)
    if not results.is_dir():  # a mistyped --results would rewrite every page and the README table as empty
        print(f"orbitkernels: error: results folder {str(results)!r} "
              f"{'is not a folder' if results.exists() else 'does not exist'}; point --results at the folder "
              "`orbitkernels reproduce` wrote to (default ./results)", file=sys.stderr)
        return 1
    readme = Path(args.readme) if args.readme else None
    if readme is not None and args.readme != "README.md":  # the default may be absent (a run outside the clone)
        if not has_marked_block(readme, "results"):
            print(f"orbitkernels: error: --readme {args.readme!r} "
                  f"{'has no <!-- results:begin/end --> block' if readme.is_file() else 'is not a file'}; "
                  "give a file with that block, or '' to skip", file=sys.stderr)
            return 1
    # every page is rendered before any is written: a damaged results file (a ResultsFileError naming it) leaves
    # docs/ as it was, where the pages rendered before it had already been rewritten
    pages, blocks = {}, []
    for paper, module in PAPERS.items():
        try:
            mod = importlib.import_module(module)
        except ImportError:
            continue
        if hasattr(mod, "render_markdown"):
            pages[docs / "reproductions" / f"{paper}.md"] = mod.render_markdown(results)
        elif hasattr(mod, "render_page"):  # a hand-written page with a generated block
            path = docs / Path(page_of(paper)).relative_to("docs")
            if path.exists():
                blocks.append((path, mod.PAGE_BLOCK, mod.render_page(results)))
    pages[docs / "results.md"] = render_results(results)
    pages[docs / "performance.md"] = bench_markdown(results / "bench")
    blocks.append((docs / Path(PROBES_PAGE).relative_to("docs"), "probes", render_probes(results)))
    if readme is not None:
        blocks.append((readme, "results", render_readme_block(results)))
    written = []
    for path, text in pages.items():
        write_page(text, path)
        written.append(path)
    written += [path for path, name, text in blocks if update_marked_block(path, name, text)]
    if args.json:
        _print_json([str(p) for p in written])
    else:
        print("\n".join(f"wrote {p}" for p in written))
    return 0


def _cmd_datasets(args):
    from .datasets import dataset_status

    rows = dataset_status(data_home=args.data_home, verify=args.verify)
    # --verify is a check: a file that fails its checksum fails the command (scripts and CI see it)
    # (a file with no published checksum is not a failure: "found (partly unverifiable)")
    status = 1 if any(row["status"] == "checksum mismatch" for row in rows) else 0
    if args.json:
        _print_json(rows)
        return status
    width = max(12, *(len(row["status"]) for row in rows))
    for row in rows:
        print(f"{row['name']:<15} {row['status']:<{width}} {row.get('data_home', '')}")
        if row.get("missing"):
            # where to download them from is in the note: the URLs may be other files than these (MNIST's IDX files)
            print(f"{'':15} missing: {', '.join(map(str, row['missing']))}")
        if row.get("note"):
            print(f"{'':15} {row['note']}")
    return status


#: every environment variable the library reads (tests/test_cli_demo.py checks the list against the sources)
ENVIRONMENT_HELP = """environment variables:
  ORBITKERNELS_DATA                 data folder (default: the user cache; --data-home of `datasets`)
  ORBITKERNELS_RESULTS              results root of `reproduce` (default: ./results)
  ORBITKERNELS_NUM_THREADS          threads of a transform's block pooling and FFTs (default:
                                    OMP_NUM_THREADS, else the cores; one off the main thread)
  ORBITKERNELS_NUMBA=0              the fused numba kernels off (NumPy passes instead)
  ORBITKERNELS_QUIET=1              no progress bars (as --quiet)
  ORBITKERNELS_BACKEND, ORBITKERNELS_DEVICE
                                    where Raj et al.'s feature maps run (numpy | torch; e.g. cuda)
  ORBITKERNELS_RAJ2017_CONFIG       reduced (default) | full: Raj et al.'s configuration
  ORBITKERNELS_RAJ2017_CELLS        only these cells (comma-separated shell patterns of cell keys)
  ORBITKERNELS_RAJ2017_TIME_BUDGET_S
                                    seconds of this invocation before it postpones the remaining cells
                                    (0: no new cell starts; resumable: the next invocation has the budget
                                    afresh)
  ORBITKERNELS_MOLECULES3D_CONFIG, ORBITKERNELS_MOLECULES3D_BUDGET_S
                                    the same for the 3-D molecules experiment
  ORBITKERNELS_BENCH_THREADS        threads of `bench` (default 1)
  ORBITKERNELS_BENCH_WARM_HEAP=0    `bench` on glibc's default allocator instead of a warm heap
"""


def _seed(text):
    """``--seed``: NumPy's seeds are 0 .. 2**32 - 1; outside them argparse's usage error, not a traceback."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid seed {text!r}: a whole number from 0 to 2**32 - 1") from None
    if not 0 <= value < 2**32:
        raise argparse.ArgumentTypeError(f"seed must be from 0 to 2**32 - 1; got {value}")
    return value


def _common_options(parser, default):
    # On the main parser the defaults are False; on a subcommand they are SUPPRESS, so that
    # `orbitkernels --quiet reproduce ...` is not reset by the subcommand's own (absent) flag.
    parser.add_argument("--quiet", action="store_true", default=default, help="no progress bars")
    parser.add_argument("--json", action="store_true", default=default,
                        help="print machine-readable results on stdout")


def build_parser():
    """The :class:`argparse.ArgumentParser` of ``orbitkernels`` and its five subcommands."""
    from .experiments import PAPERS

    parser = argparse.ArgumentParser(
        prog="orbitkernels",
        description="Learning with group invariances through kernels: demo, paper reproductions, benchmarks, data.",
        epilog=ENVIRONMENT_HELP, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"orbitkernels {__version__}")
    _common_options(parser, False)
    sub = parser.add_subparsers(dest="command", metavar="{demo,reproduce,bench,report,datasets}")

    p = sub.add_parser("demo", help="rotation-invariant digits: plain RFF vs orbit features vs Haar kernel "
                                    "(under a minute)")
    p.add_argument("--out", default="demo_output",
                   help="folder for demo.json and demo.png, or demo_quick.json and demo_quick.png with --quick "
                        "(default: %(default)s)")
    p.add_argument("--seed", type=_seed, default=0, help="random seed, 0 to 2**32 - 1 (default: %(default)s)")
    p.add_argument("--quick", action="store_true", help="smaller sizes (a few seconds)")
    p.set_defaults(func=_cmd_demo)

    p = sub.add_parser("reproduce", help="reproduce a paper's tables and figures (results/<paper>/*.json + PNG)")
    p.add_argument("paper", help=", ".join(PAPERS))
    p.add_argument("--experiment", "-e", default=None, help="one experiment (default: all); --list shows them")
    p.add_argument("--list", action="store_true", help="list the paper's experiments")
    p.add_argument("--quick", action="store_true", help="tiny configuration (pipeline check, under a minute)")
    p.add_argument("--out", default=None, help="results root (default: $ORBITKERNELS_RESULTS or ./results)")
    p.add_argument("--no-resume", action="store_true", help="recompute cells finished by an interrupted run")
    p.add_argument("--seed", type=_seed, default=0, help="random seed, 0 to 2**32 - 1 (default: %(default)s)")
    p.add_argument("--download", action="store_true",
                   help="download missing datasets (default: never touch the network; experiments whose data are "
                        "missing are skipped)")
    p.set_defaults(func=_cmd_reproduce)

    p = sub.add_parser("bench", help="speed and memory benchmarks, reported as ratios (results/bench/*.json)")
    p.add_argument("--name", action="append",
                   help="a benchmark to run (repeatable; default: all; an unknown name lists the choices)")
    p.add_argument("--quick", action="store_true",
                   help="tiny sizes: a check that the benchmarks run, not a measurement")
    p.add_argument("--out", default=None, help="folder of the <name>.json files (default ./results/bench)")
    p.set_defaults(func=_cmd_bench)

    p = sub.add_parser("report", help="regenerate docs/ (results, reproductions, performance) from results/*.json")
    p.add_argument("--results", default=None,
                   help="results root (default: $ORBITKERNELS_RESULTS or ./results, as reproduce writes)")
    p.add_argument("--docs", default="docs", help="documentation folder (default: %(default)s)")
    p.add_argument("--readme", default="README.md",
                   help="file whose <!-- results:begin/end --> block gets the headline table (default: %(default)s; "
                        "'' to skip)")
    p.set_defaults(func=_cmd_report)

    p = sub.add_parser("datasets", help="where each dataset is looked for, and whether it is there")
    p.add_argument("--data-home", default=None, help="data folder (default: $ORBITKERNELS_DATA or the user cache)")
    p.add_argument("--verify", action="store_true",
                   help="also check the files' checksums (slower; exit status 1 on a mismatch)")
    p.set_defaults(func=_cmd_datasets)
    for p in sub.choices.values():
        _common_options(p, argparse.SUPPRESS)
    return parser


def _describe(exc):
    """One line for an error at the CLI boundary."""
    if isinstance(exc, OSError) and not isinstance(exc, UserError) and exc.filename is not None:
        what = exc.strerror or type(exc).__name__
        hint = ""
        if isinstance(exc, (FileExistsError, NotADirectoryError)):
            hint = " (a file is where a folder is needed: choose another path)"
        elif isinstance(exc, PermissionError):
            hint = " (choose a folder you can write to)"
        return f"{exc.filename}: {what}{hint}"
    return str(exc) or type(exc).__name__


def _stdout_to_devnull():
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # a replaced stdout (tests, notebooks): nothing to redirect
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


class _Terminated(KeyboardInterrupt):
    """SIGTERM (what ``timeout``, Slurm and ``docker stop`` send), raised as an interrupt so that the clean-up of
    an interrupted run happens: killed outright, a run left the hidden temporary file of its figure behind."""


def _on_sigterm(signum, frame):
    raise _Terminated()


def main(argv=None):
    """Run the command line with ``argv``; return the exit status.

    Parameters
    ----------
    argv : list of str or None, default=None
        The arguments after the program name; None: ``sys.argv[1:]``.

    Returns
    -------
    int
        0 on success; 1 for an error in what the user gave (one ``orbitkernels: error: ...`` line on
        stderr) or a failed ``datasets --verify``; 2 without a subcommand (the help is printed) or for
        an unknown paper, experiment or benchmark; 130 when interrupted (143 by SIGTERM, which the command
        line turns into an interrupt while it runs); 141 (a shell's status for SIGPIPE),
        without a message, when the reader of stdout has gone (``orbitkernels datasets | head -1``). A
        malformed command line exits through argparse (:class:`SystemExit` with status 2).
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    set_quiet(True if args.quiet or args.json else None)  # without --quiet, ORBITKERNELS_QUIET still decides
    out = getattr(args, "out", None)
    if out is not None and not out.strip():  # --out '' wrote into the current folder
        parser.error(f"--out is blank ({out!r}); give a folder, or leave --out out for the default")
    handle_term = threading.current_thread() is threading.main_thread()  # signal handlers: main thread only
    previous = signal.signal(signal.SIGTERM, _on_sigterm) if handle_term else None
    try:
        return args.func(args)
    except KeyboardInterrupt as exc:
        # only reproduce keeps finished cells; the other commands start over
        resume = "finished cells are saved; run the same command again to resume" if args.command == "reproduce" \
            else "nothing was kept; run the command again to start over"
        how = "terminated" if isinstance(exc, _Terminated) else "interrupted"
        print(f"\n{how}: {resume}", file=sys.stderr)
        return 143 if isinstance(exc, _Terminated) else 130
    except BrokenPipeError:
        # the reader of stdout left (``orbitkernels datasets | head -1``): stop without a word, as a shell tool
        # killed by SIGPIPE does, and leave nothing buffered for the interpreter's last flush to fail on
        _stdout_to_devnull()
        return 141
    except (OSError, UserError) as exc:  # the user's paths, files and data; any other exception is a bug
        print(f"orbitkernels: error: {_describe(exc)}", file=sys.stderr)
        return 1
    finally:
        if handle_term:  # None: a handler installed from C, which Python cannot reinstall; the default then
            signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
