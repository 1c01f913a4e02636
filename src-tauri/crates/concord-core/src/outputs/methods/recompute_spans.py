# -------------------------------------------------------------------------------------------------
# Evidence spans.
#
# An appendix whose rubric's replies carry marked spans also holds
#   spans.csv           every located span the figures read: conversation, turn, source, rater,
#                       rater_kind, code, start and end (Unicode characters of the reply),
#   span_replies.csv    each compared reply's length and each rater who covers it (rated it or
#                       marked it), in the order the replies are laid end to end,
#   span_agreement.csv  per code and over all codes (`all`): Krippendorff's unitized alpha among
#                       the experts, and each two raters' exact and overlap span F1.
# check_spans recomputes every alpha and F1 from the first two files to 1e-6. No public package
# computes the unitized alpha, so it is transcribed here from Krippendorff (1995, 2004) as DKPro
# Statistics computes it, in exact fractions. The bootstrap intervals depend on Concord's seeded
# ChaCha8 stream and are not redrawn.
# -------------------------------------------------------------------------------------------------

from fractions import Fraction


def span_distance(first, second):
    """Krippendorff's squared distance of two raters' segments (begin, length, is_unit)."""
    (b1, l1, u1), (b2, l2, u2) = first, second
    shift, stretch = b1 - b2, l1 - l2
    if u1 and u2 and -l1 < shift < l2:
        return shift * shift + (shift + stretch) ** 2
    if u1 and not u2 and 0 <= shift <= -stretch:
        return l1 * l1
    if u2 and not u1 and -stretch <= shift <= 0:
        return l2 * l2
    return 0


class RaterCut:
    """One rater's units of one code and the gaps between them, walked along the continuum."""

    def __init__(self, units, begin, end):
        self.units, self.next, self.end = units, 0, end
        self.begin, self.length, self.is_unit = begin, 0, False

    def pending(self):
        return self.next < len(self.units)

    def step(self, pos):
        if pos != self.begin + self.length:
            return
        if self.pending() and self.units[self.next][0] == pos:
            self.length, self.is_unit = self.units[self.next][1], True
            self.next += 1
        else:
            upcoming = self.units[self.next][0] if self.pending() else self.end
            self.length, self.is_unit = upcoming - pos, False
        self.begin = pos

    def segment(self):
        return (self.begin, self.length, self.is_unit)


def code_disagreements(length, cuts):
    """Observed and expected disagreement of one code; `cuts` holds each rater's (begin, length)
    units of it, sorted."""
    raters = len(cuts)
    observed = 0
    for i in range(raters):
        for j in range(i + 1, raters):
            a, b = RaterCut(cuts[i], 0, length), RaterCut(cuts[j], 0, length)
            pos = 0
            while pos < length and (a.pending() or b.pending()):
                a.step(pos)
                b.step(pos)
                observed += span_distance(a.segment(), b.segment())
                pos = min(a.begin + a.length, b.begin + b.length)
    gaps = []
    for units in cuts:
        pos = 0
        for begin, size in units:
            if begin > pos:
                gaps.append(begin - pos)
            pos = begin + size
        if pos < length:
            gaps.append(length - pos)
    sizes = [size for units in cuts for _, size in units]
    placements = 0
    for size in sizes:
        placements += (len(sizes) - 1) * size * (size - 1) * (2 * size - 1) // 3
        placements += size * size * sum(g - size + 1 for g in gaps if g >= size)
    total = raters * length
    d_o = Fraction(2 * observed, raters * (raters - 1) * length * length)
    d_e = Fraction(2 * placements, length * (total * (total - 1) - sum(s * (s - 1) for s in sizes)))
    return d_o, d_e


def unitized_alpha(length, raters, units):
    """Per code and over all codes; `units` are (begin, length, rater, code)."""
    codes = sorted({u[3] for u in units})
    per_code, observed, expected = {}, [], []
    for code in codes:
        cuts = [sorted((b, n) for b, n, r, c in units if c == code and r == k) for k in range(raters)]
        d_o, d_e = code_disagreements(length, cuts)
        per_code[code] = 0.0 if d_o == d_e else float(1 - d_o / d_e)
        observed.append(d_o)
        expected.append(d_e)
    if not codes:
        return per_code, None
    d_o, d_e = sum(observed) / len(codes), sum(expected) / len(codes)
    if d_o == d_e:
        return per_code, 1.0 if d_o == 0 and any(u[1] > 0 for u in units) else 0.0
    return per_code, float(1 - d_o / d_e)


def merged(spans):
    """One rater's spans of one code with the overlapping ones joined."""
    out = []
    for start, end in sorted(spans):
        if out and start < out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def span_f1(first, second):
    """Exact and overlap F1 of two raters' spans (reply, code, start, end)."""
    if not first and not second:
        return None, None
    remaining = list(second)
    matches = 0
    for s in first:
        if s in remaining:
            remaining.remove(s)
            matches += 1
    exact = 2 * matches / (len(first) + len(second))

    def overlapping(mine, theirs):
        return sum(any(o[:2] == s[:2] and o[2] < s[3] and s[2] < o[3] for o in theirs) for s in mine)

    precision = overlapping(first, second) / len(first) if first else 0.0
    recall = overlapping(second, first) / len(second) if second else 0.0
    overlap = 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)
    return exact, overlap


def check_spans(directory):
    spans = pd.read_csv(os.path.join(directory, "spans.csv"), dtype=str, keep_default_na=False)
    replies = pd.read_csv(os.path.join(directory, "span_replies.csv"), dtype=str,
                          keep_default_na=False)
    table = pd.read_csv(os.path.join(directory, "span_agreement.csv"), dtype=str,
                        keep_default_na=False)
    key = lambda row: (row["conversation_id"], int(row["turn"]), row["source"])
    order, lengths, covers = [], {}, {}
    for _, row in replies.iterrows():
        k = key(row)
        if k not in lengths:
            order.append(k)
            lengths[k] = int(row["length"])
        covers.setdefault(k, set()).add(row["rater"])
    kinds = dict(zip(spans["rater"], spans["rater_kind"]))
    raters = sorted(kinds, key=lambda name: (kinds[name] == "judge", name))
    experts = [r for r in raters if kinds[r] == "expert"]
    marks = {}
    for _, row in spans.iterrows():
        marks.setdefault(key(row), []).append(
            (row["rater"], row["code"], int(row["start"]), int(row["end"])))
    checked, failures = 0, []

    def compare(label, mine, theirs):
        nonlocal checked
        checked += 1
        if theirs == "":
            ok = mine is None
        else:
            ok = mine is not None and abs(mine - float(theirs)) <= TOLERANCE
        if not ok:
            failures.append(f"span_agreement.csv {label}: recomputed {mine}, table {theirs}")

    def alpha_of(code):
        if len(experts) < 2:
            return None
        units, offset = [], 0
        for k in order:
            marked = marks.get(k, [])
            if not any(r in experts for r, *_ in marked) or not all(e in covers[k] for e in experts):
                continue
            for e, expert in enumerate(experts):
                for c in sorted({c for r, c, *_ in marked if r == expert}):
                    own = [(s, t) for r, cc, s, t in marked if r == expert and cc == c]
                    units += [(offset + s, t - s, e, c) for s, t in merged(own)]
            offset += lengths[k]
        if offset == 0:
            return None
        per_code, overall = unitized_alpha(offset, len(experts), units)
        return overall if code == "all" else per_code.get(code)

    def f1_of(code, a, b):
        first, second = [], []
        for i, k in enumerate(order):
            if not (a in covers[k] and b in covers[k]):
                continue
            for r, c, s, t in marks.get(k, []):
                if code != "all" and c != code:
                    continue
                if r == a:
                    first.append((i, c, s, t))
                elif r == b:
                    second.append((i, c, s, t))
        return span_f1(first, second)

    for _, row in table.iterrows():
        label = f"{row['code']} {row['figure']} {row['a']} {row['b']}".strip()
        if row["figure"] == "alpha_u":
            compare(label, alpha_of(row["code"]), row["value"])
        else:
            exact, overlap = f1_of(row["code"], row["a"], row["b"])
            compare(label, exact if row["figure"] == "f1_exact" else overlap, row["value"])
    print(f"{checked} span figures recomputed (unitized alpha and span F1)")
    print("not recomputed: the bootstrap intervals of span_agreement.csv (Concord's seeded ChaCha8 stream)")
    if failures:
        print("\n".join(failures))
        return 1
    return 0


if __name__ == "__main__":
    pg.options["round.column.CI95"] = None
    here = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    checks = [main(here), check_spans(here)]
    if "check_turns" in globals():
        checks.append(check_turns(here))
    sys.exit(max(checks))
