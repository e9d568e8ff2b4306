"""Debugging recall: traces, explain (why not), replay, judge, eval (incl. LoCoMo), tune, feedback, trust."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from memdeck.cli._common import (
    add_json,
    memory_id,
    non_negative_int,
    open_store,
    positive_int,
    principal,
    print_json,
    safe,
    scope_of,
    short,
    trace_id,
)
from memdeck.core.config import Profile, load_profile, parse_weights
from memdeck.core.errors import MemdeckError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("traces", help="the recall trace log: list or show logged recalls")
    tsub = p.add_subparsers(dest="traces_command", metavar="ACTION", parser_class=type(p))
    q = tsub.add_parser("list", help="newest logged recalls first")
    q.add_argument("--agent", type=principal, help="only this agent's recalls")
    q.add_argument(
        "--principal", action="append", type=principal, help="only recalls scoped within these principals"
    )
    q.add_argument("--limit", type=positive_int, default=20, help="traces to show (default 20)")
    q.add_argument("--offset", type=non_negative_int, default=0, help="traces to skip first (default 0)")
    add_json(q)
    q.set_defaults(func=cmd_traces_list)
    q = tsub.add_parser(
        "show",
        help="one logged recall with its candidates' components (the results, every search channel's hits, the best others up to [traces] max_candidates)",
    )
    q.add_argument("trace_id", type=trace_id, help="the trace's id (trc_...)")
    q.add_argument(
        "--principal",
        action="append",
        type=principal,
        help="only if the recall was scoped within these principals (repeatable)",
    )
    add_json(q)
    q.set_defaults(func=cmd_traces_show)
    p.set_defaults(func=lambda a, parser=p: _need_action(parser))

    p = sub.add_parser(
        "explain", help="why a memory was (not) returned for a query, and what would change it"
    )
    p.add_argument("query", help="the query, in words")
    p.add_argument("--id", required=True, dest="memory_id", type=memory_id, help="the memory in question")
    p.add_argument(
        "--principal", required=True, action="append", type=principal, help="whose recall (repeatable)"
    )
    p.add_argument(
        "--k", type=positive_int, default=10, help="the top k the memory should be in (default 10)"
    )
    _add_profile_args(p)
    add_json(p)
    p.set_defaults(func=cmd_explain)

    p = sub.add_parser("replay", help="re-rank logged recalls under other weights: what enters and leaves")
    p.add_argument("trace_id", nargs="?", type=trace_id, help="one trace (or use --agent)")
    p.add_argument("--agent", type=principal, help="every logged recall of this agent")
    p.add_argument(
        "--principal", action="append", type=principal, help="only traces scoped within these principals"
    )
    p.add_argument("--k", type=positive_int, help="top k to compare (default: each trace's k)")
    p.add_argument("--limit", type=positive_int, default=1000, help="newest traces of the agent to replay")
    p.add_argument(
        "--research", action="store_true", help="search again instead of re-scoring logged candidates"
    )
    _add_profile_args(p)
    add_json(p)
    p.set_defaults(func=cmd_replay)

    p = sub.add_parser("judge", help="save a relevance judgment (used by eval and tune)")
    p.add_argument("query", nargs="?", help="the query (or use --trace)")
    p.add_argument("--id", required=True, dest="memory_id", type=memory_id, help="the memory judged")
    p.add_argument("--principal", action="append", type=principal, help="whose recall (one, with a query)")
    p.add_argument("--trace", type=trace_id, help="judge against a logged recall's query and principal")
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--relevant", action="store_true", help="the memory answers the query")
    g.add_argument("--irrelevant", action="store_true", help="the memory does not answer the query")
    add_json(p)
    p.set_defaults(func=cmd_judge)

    p = sub.add_parser("eval", help="recall@k, nDCG@k, MRR on saved judgments; or `eval locomo --data FILE`")
    p.add_argument("target", nargs="?", choices=["locomo"], help="locomo: the LoCoMo retrieval benchmark")
    p.add_argument("--data", help="LoCoMo-format JSON file (for `eval locomo`)")
    p.add_argument("--limit-conversations", type=positive_int, help="only the first N conversations")
    p.add_argument("--principal", action="append", type=principal, help="only these principals' judgments")
    p.add_argument(
        "--k", type=positive_int, default=10, help="the cut-off of recall@k and nDCG@k (default 10)"
    )
    p.add_argument("--profile", help="the profile to evaluate (default: default)")
    p.add_argument("--weights", help="weights on top of the profile, e.g. relevance=0.7")
    add_json(p)
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("tune", help="search weights and half-lives that maximise nDCG on the judgments")
    p.add_argument("--trials", type=positive_int, default=200, help="weight settings to try (default 200)")
    p.add_argument("--seed", type=int, default=0, help="random seed of the search (default 0)")
    p.add_argument("--k", type=positive_int, default=10, help="the cut-off of nDCG@k (default 10)")
    p.add_argument("--profile", help="start from this profile (default: default)")
    p.add_argument("--principal", action="append", type=principal, help="only these principals' judgments")
    p.add_argument("--save", metavar="NAME", help="save the result as this profile")
    add_json(p)
    p.set_defaults(func=cmd_tune)

    p = sub.add_parser("feedback", help="say a recall (trace id) or a memory was useful or wrong")
    p.add_argument("target", help="a trace id (trc_...) or a memory id")
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--useful", action="store_true", help="it helped")
    g.add_argument("--wrong", action="store_true", help="it was wrong or misleading")
    # The same verdicts in a procedure's words: counted as its outcomes (memdeck show, the review queue).
    g.add_argument("--worked", dest="useful", action="store_true", help="a procedure worked when followed")
    g.add_argument("--failed", dest="wrong", action="store_true", help="a procedure failed when followed")
    p.add_argument("--agent", type=principal, help="who gives the feedback")
    p.add_argument(
        "--principal", action="append", type=principal, help="only if it is this principal's (repeatable)"
    )
    add_json(p)
    p.set_defaults(func=cmd_feedback)

    p = sub.add_parser("trust", help="each agent's trust from feedback")
    add_json(p)
    p.set_defaults(func=cmd_trust)


def _need_action(parser: argparse.ArgumentParser) -> int:
    raise MemdeckError(f"{parser.prog} needs an action: list or show")


def _add_profile_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--profile", help="a saved weight profile")
    p.add_argument("--weights", help="e.g. relevance=0.7,recency=0.1,half_life.episodic=14")


def _profile(args: argparse.Namespace, required: bool = False) -> Profile | None:
    if required and not (args.profile or args.weights):
        raise MemdeckError("give --weights or --profile")
    profile = load_profile(args.profile) if args.profile else None
    if args.weights:
        profile = parse_weights(args.weights, profile or load_profile(None))
    return profile


# --- traces -----------------------------------------------------------------------------------------


def cmd_traces_list(args: argparse.Namespace) -> int:
    from memdeck.core.recall.traces import list_traces

    store = open_store(args)
    traces = list_traces(
        store.engine, scope=scope_of(args), agent=args.agent, limit=args.limit, offset=args.offset
    )
    if args.json:
        print_json([t.to_json(with_candidates=False) for t in traces])
        return 0
    if not traces:
        print("no traces")
    for t in traces:
        who = ",".join(t.principals) if t.principals else "*"
        print(
            f"{t.trace_id}  {t.at:%Y-%m-%d %H:%M:%S}  {t.source:<5} {safe(who):<12} {safe(t.agent or '-'):<10} "
            f"k={t.k} {len(t.returned)} returned  {short(t.query, 50)}"
        )
    return 0


def cmd_traces_show(args: argparse.Namespace) -> int:
    from memdeck.core.recall.traces import get_trace

    store = open_store(args)
    trace = get_trace(store.engine, args.trace_id, scope_of(args))
    if args.json:
        print_json(trace.to_json())
        return 0
    who = ",".join(trace.principals) if trace.principals else "(whole store)"
    print(
        f"trace   {trace.trace_id}\nat      {trace.at:%Y-%m-%d %H:%M:%S}\nquery   {safe(trace.query)}\n"
        f"scope   {safe(who)}\nagent   {safe(trace.agent or '-')}\nsource  {trace.source}\nprofile {trace.profile.get('name')}  "
        f"k={trace.k}{'  (keyword only)' if trace.keyword_only else ''}"
    )
    print(f"{len(trace.candidates)} candidates, best score first (* returned):")
    for c in trace.candidates:
        mark = f"*{c.returned_rank:>2}" if c.returned_rank else "   "
        comp = c.components
        print(
            f" {mark} {c.score:.3f} {c.memory_id} rel {comp['relevance']:.2f} rec {comp['recency']:.2f} "
            f"freq {comp['frequency']:.2f} imp {comp['importance']:.2f} pin {comp['pinned']:.0f} "
            f"trust {comp['trust']:.2f} graph {comp['graph']:.2f} | vector #{c.ranks['vector'] or '-'} "
            f"keyword #{c.ranks['keyword'] or '-'} graph #{c.ranks.get('graph') or '-'}"
        )
    return 0


# --- explain ------------------------------------------------------------------------------------------


def cmd_explain(args: argparse.Namespace) -> int:
    from memdeck.core.recall.explain import explain, render

    store = open_store(args)
    report = explain(
        store.engine, args.query, args.memory_id, scope_of(args), k=args.k, profile=_profile(args)
    )
    if args.json:
        print_json(report)
    else:
        print(render(report))
    return 0


# --- replay -------------------------------------------------------------------------------------------


def cmd_replay(args: argparse.Namespace) -> int:
    from memdeck.core.tuning.replay import replay

    if bool(args.trace_id) == bool(args.agent):
        raise MemdeckError("give a trace id or --agent (one of them)")
    profile = _profile(args, required=True)
    assert profile is not None
    store = open_store(args)
    report = replay(
        store.engine,
        profile,
        trace_id=args.trace_id,
        agent=args.agent,
        scope=scope_of(args),
        research=args.research,
        k=args.k,
        limit=args.limit,
    )
    if args.json:
        print_json(report)
        return 0
    print(f"replay under {profile.name}: {report['note']}")
    for r in report["traces"]:
        head = "changed" if r["changed"] else "same"
        print(f"{r['trace_id']}  {head:<7} {short(r['query'], 60)}")
        for mid in r["entered"]:
            print(f"   + {mid}  enters at #{r['after'].index(mid) + 1}")
        for mid in r["left"]:
            print(f"   - {mid}  leaves (was #{r['before'].index(mid) + 1})")
        for mid, mv in r["moved"].items():
            print(f"   ~ {mid}  #{mv['from']} -> #{mv['to']}")
    s = report["summary"]
    print(
        f"{s['changed']} of {s['traces']} recalls change; {s['entered']} memories enter, {s['left']} leave; "
        f"mean overlap {s['mean_overlap']}"
    )
    return 0


# --- judgments, eval, tune --------------------------------------------------------------------------


def cmd_judge(args: argparse.Namespace) -> int:
    from memdeck.core.tuning.evaluate import judge, judge_trace

    store = open_store(args)
    if args.trace:
        j = judge_trace(store.engine, args.trace, args.memory_id, args.relevant, scope=scope_of(args))
    else:
        if not args.query or not args.principal or len(args.principal) != 1:
            raise MemdeckError("give the query and one --principal (or --trace TRACE_ID)")
        j = judge(store.engine, args.query, args.principal[0], args.memory_id, args.relevant)
    if args.json:
        print_json(j.to_json())
    else:
        print(
            f"judged {j.memory_id} {'relevant' if j.relevant else 'not relevant'} to {short(j.query, 60)!r}"
        )
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    if args.target == "locomo":
        return _eval_locomo(args)
    if args.data or args.limit_conversations:
        raise MemdeckError("--data and --limit-conversations belong to `memdeck eval locomo`")
    from memdeck.core.tuning.evaluate import evaluate

    store = open_store(args)
    profile = _profile(args) or load_profile(None)
    report = evaluate(store.engine, profile, k=args.k, scope=scope_of(args))
    if args.json:
        print_json(report)
        return 0
    k = report["k"]
    print(
        f"{report['queries']} judged queries ({report['skipped_without_relevant']} without a relevant memory, "
        f"skipped); {report['judgments']} judgments"
    )
    print(f"{'profile':<16} {'recall@' + str(k):>10} {'nDCG@' + str(k):>10} {'MRR':>8}")
    for key in ("profile", "baseline"):
        row = report.get(key)
        if row:
            print(
                f"{row['name']:<16} {row.get(f'recall@{k}', 0):>10.4f} {row.get(f'ndcg@{k}', 0):>10.4f} "
                f"{row.get('mrr', 0):>8.4f}"
            )
    return 0


def _eval_locomo(args: argparse.Namespace) -> int:
    from memdeck.core.tuning.locomo import evaluate_locomo, render

    if not args.data:
        raise MemdeckError("`memdeck eval locomo` needs --data FILE (a LoCoMo-format JSON file)")
    if not Path(args.data).is_file():
        raise MemdeckError(f"no such file: {args.data}")
    profile = _profile(args)

    def progress(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    report = evaluate_locomo(
        args.data,
        limit_conversations=args.limit_conversations,
        profile=profile,
        k=max(args.k, 10),
        progress=None if args.json else progress,
    )
    if args.json:
        report = {key: value for key, value in report.items() if key != "per_question"}
        print_json(report)
    else:
        print(render(report))
    return 0


def cmd_tune(args: argparse.Namespace) -> int:
    from memdeck.core.tuning.tune import tune

    store = open_store(args)
    report = tune(
        store.engine,
        trials=args.trials,
        seed=args.seed,
        k=args.k,
        start=args.profile,
        save=args.save,
        scope=scope_of(args),
    )
    if args.json:
        print_json(report)
        return 0
    k = report["k"]
    key = f"ndcg@{k}"
    print(
        f"{report['trials']} trials (seed {report['seed']}); train {report['split']['train']} queries, "
        f"held out {report['split']['test']}"
    )
    print(
        f"train nDCG@{k}: {report['train']['start'].get(key, 0):.4f} -> {report['train']['tuned'].get(key, 0):.4f}"
    )
    if report["test"]:
        print(
            f"held-out nDCG@{k}: {report['test']['start'].get(key, 0):.4f} -> "
            f"{report['test']['tuned'].get(key, 0):.4f}"
        )
    else:
        print("held-out split is empty: judge more queries to see how the result generalises")
    tuned = report["tuned"]
    print("weights: " + ", ".join(f"{c}={v:g}" for c, v in tuned["weights"].items()))
    print("half-lives (days): " + ", ".join(f"{t}={v:g}" for t, v in tuned["half_life_days"].items()))
    if report.get("saved_to"):
        print(f"saved as profile {tuned['name']!r} in {report['saved_to']}")
    return 0


# --- feedback -------------------------------------------------------------------------------------------


def cmd_feedback(args: argparse.Namespace) -> int:
    from memdeck.core.recall.feedback import feedback

    store = open_store(args)
    result = feedback(store.engine, args.target, args.agent, useful=bool(args.useful), scope=scope_of(args))
    if args.json:
        print_json(result.to_json())
    else:
        verdict = "useful" if result.useful else "wrong"
        print(f"recorded {verdict} for {result.target} (counts for: {', '.join(result.agents)})")
    return 0


def cmd_trust(args: argparse.Namespace) -> int:
    from memdeck.core.recall.feedback import trust_table

    store = open_store(args)
    rows = trust_table(store.engine)
    if args.json:
        print_json(rows)
        return 0
    if not rows:
        print("no agents yet")
    for r in rows:
        print(f"{r['agent']:<20} trust {r['trust']:.3f}  ({r['useful']} useful of {r['total']})")
    return 0
