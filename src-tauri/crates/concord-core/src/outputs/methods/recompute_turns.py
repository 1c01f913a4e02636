# -------------------------------------------------------------------------------------------------
# Conversations: agreement by turn.
#
# An appendix of a reply rubric over transcripts also holds
#   agreement_by_turn.csv  per judge and attribute, the item-level ICC(C,1), ICC(A,1), bias and MSE
#                  over all turns (turn empty) and at each turn number, each with a
#                  conversation-cluster percentile bootstrap 95% CI of ICC(C,1); a turn without
#                  figures says why (not_computed),
# and ratings.csv has the columns turn and scope. check_turns recomputes every count and point
# estimate from ratings.csv with pingouin and numpy to 1e-6. Concord draws its bootstrap with a
# seeded ChaCha8 generator, which numpy does not have, so the intervals are checked against a
# cluster bootstrap drawn here with numpy's generator: CLUSTER_BATCHES batches of as many resamples
# as Concord drew. Two bootstraps differ by Monte Carlo error only, and how much depends on the
# data (an ICC's lower tail is long when there are few conversations: its 2.5th percentile varies
# several times more than its 97.5th), so that error is measured, not assumed: the spread of an
# end across the batches is the standard deviation of one bootstrap's end, and Concord's end must
# lie within CLUSTER_TOLERANCE plus CLUSTER_SDS of those standard deviations (of the difference
# from the batches' pooled end) of it.
# -------------------------------------------------------------------------------------------------

CLUSTER_TOLERANCE, CLUSTER_SDS, CLUSTER_BATCHES = 0.01, 5.0, 10
# A turn's figures need two expert-rated replies, and two conversations to resample.
MIN_TURN_ITEMS, MIN_TURN_CONVERSATIONS = 2, 2
# An interval is drawn only from this many conversations or more (Concord's
# MIN_INTERVAL_CONVERSATIONS): fewer give resamples of too few distinct values.
MIN_INTERVAL_CONVERSATIONS = 10


def cluster_moments(pairs, clusters):
    """Per conversation (in order of first appearance): pairs, and the sums and sums of squares
    of s = reference + judge and d = reference - judge about the sample's means."""
    pairs = np.asarray(pairs, dtype=float)
    s = pairs[:, 0] + pairs[:, 1]
    d = pairs[:, 0] - pairs[:, 1]
    centre = (s.mean(), d.mean())
    s, d = s - centre[0], d - centre[1]
    order = {}
    index = np.array([order.setdefault(c, len(order)) for c in clusters])
    k = len(order)
    moments = np.zeros((k, 5))
    for column, values in enumerate((np.ones_like(s), s, d, s * s, d * d)):
        moments[:, column] = np.bincount(index, weights=values, minlength=k)
    return moments


def c1_of_totals(n, s, d, ss, dd):
    """ICC(C,1) of two raters from the totals of a resample (sums about a shared centre)."""
    if n < 2:
        return None
    ss_s = max(ss - s * s / n, 0.0)
    ss_d = max(dd - d * d / n, 0.0)
    msb, mse = ss_s / (2 * (n - 1)), ss_d / (2 * (n - 1))
    if mse == 0 and msb > 0:
        return 1.0
    if msb + mse == 0:
        return None
    return (msb - mse) / (msb + mse)


def cluster_interval(pairs, clusters, resamples, seed, batches=CLUSTER_BATCHES, level=0.95):
    """Percentile bootstrap interval of ICC(C,1) resampling conversations whole: the ends over
    all `batches` × `resamples` replicates, and the standard deviation of each end across the
    batches of `resamples` (None when undefined); numpy's generator seeded with `seed`."""
    moments = cluster_moments(pairs, clusters)
    k = len(moments)
    if k < MIN_INTERVAL_CONVERSATIONS or resamples == 0:
        return None, None, None, None
    rng = np.random.default_rng(seed)
    tail = (1 - level) / 2 * 100
    every, ends = [], []
    for _ in range(batches):
        replicates = []
        for _ in range(resamples):
            weights = np.bincount(rng.integers(0, k, size=k), minlength=k)
            n, s, d, ss, dd = weights @ moments
            c1 = c1_of_totals(round(n), s, d, ss, dd)
            if c1 is not None and math.isfinite(c1):
                replicates.append(c1)
        if replicates:
            ends.append(np.percentile(replicates, [tail, 100 - tail]))
        every.extend(replicates)
    if not every:
        return None, None, None, None
    low, high = np.percentile(every, [tail, 100 - tail])
    spread = np.std(ends, axis=0, ddof=1) if len(ends) > 1 else (0.0, 0.0)
    return float(low), float(high), float(spread[0]), float(spread[1])


def check_turns(directory):
    path = os.path.join(directory, "agreement_by_turn.csv")
    if not os.path.exists(path):
        return 0
    with open(os.path.join(directory, "study.json"), encoding="utf-8") as f:
        study = json.load(f)
    table = pd.read_csv(path, dtype=str, keep_default_na=False)
    every = pd.read_csv(os.path.join(directory, "ratings.csv"), dtype=str, keep_default_na=False)
    ratings = every[(every["rubric"] == study["rubric"]) & (every["value"] != "")]
    value = {(r.rater, r.response_id, r.criterion): float(r.value) for r in ratings.itertuples()}
    turn_of = dict(zip(ratings["response_id"], ratings["turn"]))
    conversation_of = dict(zip(ratings["response_id"], ratings["conversation_id"]))
    source_of = dict(zip(ratings["response_id"], ratings["source"]))
    experts = [r["name"] for r in study["raters"] if r["kind"] == "expert"]
    judges = {(r["model_id"] or r["name"]): r for r in study["raters"] if r["kind"] == "judge"}
    members = {c["key"]: [c["key"]] for c in study["criteria"]}
    members.update(study["groups"])
    expert_rated = set(ratings[ratings["rater"].isin(experts)]["response_id"])

    checked, intervals, failures, worst = 0, 0, [], 0.0

    def compare(label, mine, theirs, tolerance=TOLERANCE):
        nonlocal checked, worst
        checked += 1
        if mine is not None and not math.isfinite(mine):
            mine = None
        if theirs == "":
            ok = mine is None
        else:
            diff = abs(mine - float(theirs)) if mine is not None else math.inf
            ok = diff <= tolerance
            if tolerance == TOLERANCE:
                worst = max(worst, diff)
        if not ok:
            failures.append(f"{label}: recomputed {mine}, table {theirs}")

    def responses_at(turn):
        return sorted(r for r in expert_rated if turn == "" or turn_of[r] == turn)

    def series(rater, target, responses):
        out = {}
        for resp in responses:
            vals = [value.get((rater, resp, m)) for m in members[target]]
            if all(v is not None for v in vals):
                out[resp] = sum(vals) / len(vals)
        return out

    for row in table.itertuples():
        where = f"turn {row.turn}" if row.turn else "all turns"
        responses = responses_at(row.turn)
        conversations = {conversation_of[r] for r in responses}
        if row.not_computed:
            label = f"by turn, {where}"
            compare(label + " n_targets", float(len(responses)), row.n_targets)
            compare(label + " n_conversations", float(len(conversations)), row.n_conversations)
            if len(responses) >= MIN_TURN_ITEMS and len(conversations) >= MIN_TURN_CONVERSATIONS:
                failures.append(f"{label}: has {len(responses)} replies in {len(conversations)} "
                                f"conversations, yet no figures ({row.not_computed})")
            continue
        judge = judges[row.rater]
        family = judge["family"]
        excluded = {
            s for s, fam in study["sources"].items()
            if study["exclude_self_family"] and family and fam == family
        }
        per_expert = [series(e, row.criterion, responses) for e in experts]
        jud = series(judge["name"], row.criterion, responses)
        pairs, clusters = [], []
        for r in responses:
            refs = [s[r] for s in per_expert if r in s]
            if refs and r in jud and source_of[r] not in excluded:
                pairs.append((sum(refs) / len(refs), jud[r]))
                clusters.append(conversation_of[r])
        label = f"by turn, {where}: {row.attribute} / {row.rater}"
        compare(label + " n_targets", float(len(pairs)), row.n_targets)
        compare(label + " n_pairs", float(len(pairs)), row.n_pairs)
        compare(label + " n_conversations", float(len(set(clusters))), row.n_conversations)
        d = np.array([j - r for r, j in pairs])
        compare(label + " bias", float(d.mean()) if len(d) else None, row.bias)
        compare(label + " mse", float((d ** 2).mean()) if len(d) else None, row.mse)
        if len(pairs) >= MIN_TARGETS:
            long = pd.DataFrame(
                [(t, who, v) for t, pair in enumerate(pairs)
                 for who, v in zip(("reference", "judge"), pair)],
                columns=["target", "rater", "score"],
            )
            icc = pg.intraclass_corr(long, "target", "rater", "score").set_index("Type")
            for form, column in (("ICC(C,1)", "icc_c1"), ("ICC(A,1)", "icc_a1")):
                line = icc.loc[form if form in icc.index else FORMS[form]]
                compare(f"{label} {column}", float(line["ICC"]), getattr(row, column))
        if pairs and row.ci_method == "cluster bootstrap":
            low, high, sd_low, sd_high = cluster_interval(pairs, clusters, int(row.resamples),
                                                          int(row.seed))
            intervals += 1
            if row.ci_low == "" or low is None:
                compare(label + " ci_low", low, row.ci_low)
                compare(label + " ci_high", high, row.ci_high)
            else:
                # Concord's end has one bootstrap's error; the pooled end a tenth of its variance.
                share = math.sqrt(1 + 1 / CLUSTER_BATCHES)
                compare(label + " ci_low", low, row.ci_low,
                        CLUSTER_TOLERANCE + CLUSTER_SDS * sd_low * share)
                compare(label + " ci_high", high, row.ci_high,
                        CLUSTER_TOLERANCE + CLUSTER_SDS * sd_high * share)
    print(f"{checked} numbers of agreement_by_turn.csv recomputed ({intervals} intervals against "
          f"a cluster bootstrap drawn here); largest difference {worst:.2e}")
    if failures:
        print("\n".join(failures))
        return 1
    return 0


if __name__ == "__main__":
    pg.options["round.column.CI95"] = None
    here = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    sys.exit(max(main(here), check_turns(here)))
