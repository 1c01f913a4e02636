// The generator of unitized_alpha.json's computed figures (the "distances" and "published"
// entries were written by hand from the sources named there). It sits in DKPro's package to reach
// the per-category methods. To run it: compile dkpro-statistics-agreement 2.3's main sources
// (slf4j on the class path), then
//   javac -cp CLASSES -d OUT UnitizedAlphaVectors.java
//   java -cp CLASSES:OUT org.dkpro.statistics.agreement.unitizing.UnitizedAlphaVectors
// and merge the printed cases into unitized_alpha.json.
package org.dkpro.statistics.agreement.unitizing;

import java.util.*;

/**
 * Prints the unitized-alpha test vectors of concord-stats as JSON: each study's units and what
 * DKPro Statistics' KrippendorffAlphaUnitizingAgreement computes for it (per category the
 * observed and expected disagreement and alpha, and alpha over all categories).
 * Run beside the compiled classes of dkpro-statistics-agreement (2.3.x).
 */
public class UnitizedAlphaVectors {
    record Unit(long offset, long length, int rater, String category) {}
    record Case(String name, String source, long begin, long length, int raters, List<Unit> units) {}

    static String num(double v) {
        if (Double.isNaN(v)) return "null";
        return Double.toString(v);
    }

    static void print(Case c, boolean last) {
        UnitizingAnnotationStudy study = new UnitizingAnnotationStudy(c.raters, c.begin, c.length);
        for (Unit u : c.units) study.addUnit(u.offset, u.length, u.rater, u.category);
        KrippendorffAlphaUnitizingAgreement a = new KrippendorffAlphaUnitizingAgreement(study);
        StringBuilder s = new StringBuilder();
        s.append("    {\"name\": \"").append(c.name).append("\", \"source\": \"").append(c.source)
         .append("\", \"begin\": ").append(c.begin).append(", \"length\": ").append(c.length)
         .append(", \"raters\": ").append(c.raters).append(",\n     \"units\": [");
        for (int i = 0; i < c.units.size(); i++) {
            Unit u = c.units.get(i);
            s.append(i == 0 ? "" : ", ").append("[").append(u.offset).append(", ").append(u.length)
             .append(", ").append(u.rater).append(", \"").append(u.category).append("\"]");
        }
        s.append("],\n     \"categories\": {");
        TreeSet<String> cats = new TreeSet<>();
        for (Unit u : c.units) cats.add(u.category);
        int k = 0;
        for (String cat : cats) {
            s.append(k++ == 0 ? "" : ", ").append("\"").append(cat).append("\": {\"observed\": ")
             .append(num(a.calculateObservedCategoryDisagreement(cat))).append(", \"expected\": ")
             .append(num(a.calculateExpectedCategoryDisagreement(cat))).append(", \"alpha\": ")
             .append(num(a.calculateCategoryAgreement(cat))).append("}");
        }
        s.append("},\n     \"alpha\": ").append(num(a.calculateAgreement())).append("}");
        s.append(last ? "\n" : ",\n");
        System.out.print(s);
    }

    static List<Unit> k1995(double stretch) {
        List<Unit> out = new ArrayList<>();
        Object[][] all = {
            {"A", new long[][] {{2, 8, 0}, {14, 6, 0}, {4, 4, 1}, {15, 2, 1}}},
            {"B", new long[][] {{0, 18, 0}, {0, 2, 1}, {2, 1, 1}, {3, 1, 1}, {4, 1, 1}, {5, 1, 1}, {6, 3, 1}, {9, 1, 1}}},
            {"C", new long[][] {{2, 6, 0}, {10, 2, 0}, {14, 4, 0}, {20, 2, 0}, {0, 2, 1}, {4, 4, 1}, {10, 4, 1}, {16, 2, 1}, {20, 2, 1}}},
            {"D", new long[][] {{0, 2, 0}, {2, 8, 0}, {10, 4, 0}, {14, 6, 0}, {20, 4, 0}, {0, 4, 1}, {4, 4, 1}, {8, 7, 1}, {15, 2, 1}, {17, 7, 1}}},
        };
        for (Object[] cat : all) {
            for (long[] u : (long[][]) cat[1]) {
                out.add(new Unit((int) (u[0] * stretch), (int) (u[1] * stretch), (int) u[2], (String) cat[0]));
            }
        }
        return out;
    }

    public static void main(String[] args) {
        List<Case> cases = new ArrayList<>();
        for (double stretch : new double[] {0.5, 1, 5, 50, 500, 5000, 50000}) {
            cases.add(new Case("krippendorff_1995_stretch_" + (stretch == 0.5 ? "0.5" : Long.toString((long) stretch)),
                "Krippendorff (1995), p. 57: four pairs of observers (A-D) on a continuum of 24, each length multiplied by the stretch",
                0, (int) (24 * stretch), 2, k1995(stretch)));
        }
        cases.add(new Case("krippendorff_2004", "Krippendorff (2004), p. 254: two observers, categories c and k, continuum 150..450", 150, 300, 2,
            List.of(new Unit(225, 70, 0, "c"), new Unit(370, 30, 0, "c"), new Unit(220, 80, 1, "c"), new Unit(355, 20, 1, "c"),
                    new Unit(400, 20, 1, "c"), new Unit(180, 60, 0, "k"), new Unit(300, 50, 0, "k"), new Unit(180, 60, 1, "k"),
                    new Unit(300, 50, 1, "k"))));
        cases.add(new Case("one_long_against_three_short", "DKPro Statistics' unitizing test study: one unit of 8 against three of 1", 0, 10, 2,
            List.of(new Unit(1, 8, 0, "A"), new Unit(2, 1, 1, "A"), new Unit(4, 1, 1, "A"), new Unit(6, 1, 1, "A"))));
        cases.add(new Case("single_unit_three_raters", "DKPro Statistics: a single unit of one of three raters (alpha 0)", 0, 20, 3,
            List.of(new Unit(0, 1, 0, "X"))));
        cases.add(new Case("zero_length_units_differing", "DKPro Statistics: only zero-length units, categories differing (alpha 0)", 0, 15, 2,
            List.of(new Unit(0, 0, 0, "A"), new Unit(0, 0, 1, "B"))));
        cases.add(new Case("zero_length_units_same", "DKPro Statistics: only zero-length units, one category (alpha 0)", 0, 15, 2,
            List.of(new Unit(0, 0, 0, "A"), new Unit(0, 0, 1, "A"))));
        cases.add(new Case("zero_length_beside_agreement", "DKPro Statistics: a zero-length unit beside units agreed on (alpha 1)", 0, 15, 2,
            List.of(new Unit(0, 0, 0, "A"), new Unit(2, 5, 0, "A"), new Unit(2, 5, 1, "A"))));
        // Seeded random studies: up to four raters, three categories, no two units of one rater and
        // category overlapping (as the measure requires).
        Random rng = new Random(20240617L);
        for (int n = 0; n < 8; n++) {
            int raters = 2 + rng.nextInt(3);
            long length = 40 + rng.nextInt(400);
            List<Unit> units = new ArrayList<>();
            String[] cats = {"x", "y", "z"};
            for (int r = 0; r < raters; r++) {
                for (String cat : cats) {
                    long pos = rng.nextInt(10);
                    while (true) {
                        long len = 1 + rng.nextInt(30);
                        if (pos + len > length) break;
                        units.add(new Unit(pos, len, r, cat));
                        pos += len + 1 + rng.nextInt(40);
                    }
                }
            }
            cases.add(new Case("random_" + n, "seeded random study (java.util.Random 20240617), computed by DKPro Statistics", 0, length, raters, units));
        }
        System.out.println("{\n  \"cases\": [");
        for (int i = 0; i < cases.size(); i++) print(cases.get(i), i == cases.size() - 1);
        System.out.println("  ]\n}");
    }
}
