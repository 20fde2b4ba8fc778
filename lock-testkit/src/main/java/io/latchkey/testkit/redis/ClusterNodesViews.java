package io.latchkey.testkit.redis;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** The nodes' views of a Redis cluster, from their {@code CLUSTER NODES}; see {@link RedisCluster}. */
final class ClusterNodesViews {

    private ClusterNodesViews() {
    }

    /**
     * Per node, from the output of {@code CLUSTER NODES} of each node after a line {@code #node <port>}:
     * the sorted lines "address role primary slots"; empty if the node does not answer, sees a node
     * failing or in a handshake, or has a link down.
     */
    static Map<Integer, String> parse(String out) {
        Map<Integer, String> views = new HashMap<>();
        for (String part : out.split("#node ")) {
            if (part.isBlank()) {
                continue;
            }
            List<String> lines = new ArrayList<>(part.lines().toList());
            int port = Integer.parseInt(lines.remove(0).trim());
            List<String> view = new ArrayList<>();
            for (String line : lines) {
                // <id> <ip:port@bus> <flags> <primary id or -> <ping> <pong> <epoch> <link> <slot>...
                String[] f = line.trim().split(" ");
                if (f.length < 8) {
                    continue;
                }
                List<String> flags = new ArrayList<>(List.of(f[2].split(",")));
                flags.remove("myself");
                flags.remove("nofailover");
                if (flags.contains("fail") || flags.contains("fail?") || flags.contains("handshake")
                        || flags.contains("noaddr") || !f[7].equals("connected")) {
                    view = List.of();
                    break;
                }
                String slots = String.join(" ", Arrays.asList(f).subList(8, f.length));
                view.add(f[1].split("@")[0] + " " + String.join(",", flags) + " " + f[3] + " " + slots);
            }
            Collections.sort(view);
            views.put(port, String.join("\n", view));
        }
        return views;
    }
}
