package io.latchkey.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/** The measures of one backend, per measure, variant and round, and their Markdown table. Not thread-safe. */
final class Results {

    private final List<Backend.Variant> variants;
    private final Map<String, Map<String, Map<Integer, Double>>> byMeasure = new LinkedHashMap<>();

    Results(List<Backend.Variant> variants) {
        this.variants = variants;
    }

    void add(int round, String variant, Map<String, Double> measures) {
        measures.forEach((m, value) -> byMeasure.computeIfAbsent(m, k -> new LinkedHashMap<>())
                .computeIfAbsent(variant, k -> new TreeMap<>()).put(round, value));
    }

    /**
     * One row per measure: the median over rounds of each variant, and for each raw client the ratio
     * Latchkey / raw of each round, as median (min–max).
     */
    String markdown(String title) {
        String latchkey = variants.get(0).label();
        StringBuilder sb = new StringBuilder("#### ").append(title).append("\n\n| measure | ").append(latchkey);
        StringBuilder rule = new StringBuilder("|---|---:");
        for (Backend.Variant v : variants.subList(1, variants.size())) {
            sb.append(" | ").append(v.label()).append(" | ratio (min–max)");
            rule.append("|---:|---:");
        }
        sb.append(" |\n").append(rule).append("|\n");
        byMeasure.forEach((measure, perVariant) -> {
            Map<Integer, Double> ours = perVariant.getOrDefault(latchkey, Map.of());
            sb.append("| ").append(measure).append(" | ").append(num(median(ours.values())));
            for (Backend.Variant v : variants.subList(1, variants.size())) {
                Map<Integer, Double> raw = perVariant.getOrDefault(v.label(), Map.of());
                List<Double> ratios = new ArrayList<>();
                ours.forEach((round, value) -> {
                    Double r = raw.get(round);
                    if (r != null && r != 0) {
                        ratios.add(value / r);
                    }
                });
                sb.append(" | ").append(num(median(raw.values()))).append(" | ");
                if (ratios.isEmpty()) {
                    sb.append("–");
                } else {
                    double[] mm = Scenarios.minMax(ratios);
                    sb.append(String.format(Locale.ROOT, "**%.2f** (%.2f–%.2f)", Scenarios.median(ratios), mm[0], mm[1]));
                }
            }
            sb.append(" |\n");
        });
        return sb.toString();
    }

    private static double median(java.util.Collection<Double> xs) {
        return xs.isEmpty() ? Double.NaN : Scenarios.median(new ArrayList<>(xs));
    }

    private static String num(double x) {
        if (Double.isNaN(x)) {
            return "–";
        }
        double a = Math.abs(x);
        if (a >= 100) {
            return String.format(Locale.ROOT, "%.0f", x);
        }
        if (a >= 10) {
            return String.format(Locale.ROOT, "%.1f", x);
        }
        if (a >= 1) {
            return String.format(Locale.ROOT, "%.2f", x);
        }
        return String.format(Locale.ROOT, "%.3f", x);
    }
}
