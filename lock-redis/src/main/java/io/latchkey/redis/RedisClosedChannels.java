package io.latchkey.redis;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import java.util.Queue;
import org.redisson.client.NettyHook;
import org.redisson.client.RedisConnection;
import org.redisson.client.RedisConnectionException;
import org.redisson.client.RedisPubSubConnection;
import org.redisson.client.handler.CommandsQueue;
import org.redisson.client.protocol.QueueCommand;
import org.redisson.client.protocol.QueueCommandHolder;

/**
 * Ends at once what a Redis connection still waited for when its channel closed, where Redisson waits
 * for the timeout.
 *
 * <p><b>A connection closed during its handshake</b> fails its connect. Redisson waits for the answers
 * to its handshake commands ({@code CLIENT SETNAME}, {@code PING}, {@code AUTH}) up to the timeout even
 * when the peer closed the connection: a proxy in front of a server that is down (Docker's published
 * ports, a TCP load balancer) accepts and then closes, so each reconnect attempt took a whole timeout,
 * and a subscription came back up to a timeout after the server served again.
 *
 * <p><b>A command sent on a connection that closes before its answer</b> fails with a
 * {@link RedisConnectionException}. Redisson fails only the commands not yet written and leaves those
 * written to their timeout, though no answer can come on a closed channel. That held up a cluster
 * client's look at the cluster's layout ({@code CLUSTER NODES}, asked of one node after another until
 * one answers): asked of a node that was restarting, it waited a whole timeout (5 s by default)
 * before it asked the next node, and meanwhile a waiter whose lock had moved to a promoted replica
 * was refused ({@code MOVED} to a node the client did not know yet), though the cluster served again.
 * Our own calls were held up the same way, then reported as "did not answer", where the cause was a
 * lost connection. Blocking commands are left alone (Redisson sends them again on a new connection),
 * and so are subscriptions, which Redisson renews on the connection it reconnects.
 */
final class RedisClosedChannels implements NettyHook {

    @Override
    public void afterBoostrapInitialization(Bootstrap bootstrap) {
    }

    @Override
    public void afterChannelInitialization(Channel channel) {
        // before Redisson's queue of the channel's commands, which forgets them when the channel closes
        ChannelHandlerContext queue = channel.pipeline().context(CommandsQueue.class);
        if (queue != null) {
            channel.pipeline().addBefore(queue.name(), "latchkey-closed-channel", new Handler());
        } else {
            channel.pipeline().addLast("latchkey-closed-channel", new Handler());
        }
    }

    private static final class Handler extends ChannelInboundHandlerAdapter {
        @Override
        public void channelInactive(ChannelHandlerContext ctx) throws Exception {
            RedisConnection connection = RedisConnection.getFrom(ctx.channel());
            if (connection != null && !connection.getConnectionPromise().isDone()) {
                connection.closeAsync(); // as Redisson does when its handshake fails
                connection.getConnectionPromise().completeExceptionally(new RedisConnectionException(
                        "connection to " + ctx.channel().remoteAddress() + " closed during its handshake"));
            } else if (connection != null && !(connection instanceof RedisPubSubConnection)) {
                Queue<QueueCommandHolder> sent = ctx.channel().attr(CommandsQueue.COMMANDS_QUEUE).get();
                if (sent != null) {
                    for (QueueCommandHolder holder : sent) {
                        QueueCommand command = holder.getCommand();
                        if (!command.isBlockingCommand()) {
                            command.tryFailure(new RedisConnectionException("connection to "
                                    + ctx.channel().remoteAddress() + " closed before Redis answered"));
                        }
                    }
                }
            }
            super.channelInactive(ctx);
        }
    }
}
