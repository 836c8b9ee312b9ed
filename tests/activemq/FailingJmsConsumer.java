// A JMS application whose listener always throws: the ActiveMQ client redelivers the message
// maxRedeliveries times, then poison-acks it with the redelivery limit as the cause, and the
// broker moves it to the DLQ with dlqDeliveryFailureCause. Run by tests/activemq/kit.py with
// Java's single-file launcher against Debian's ActiveMQ jars, over OpenWire on 127.0.0.1:61616.
//   java -cp "/usr/share/activemq/lib/*" FailingJmsConsumer.java <queue> <maxRedeliveries>
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import javax.jms.*;
import org.apache.activemq.ActiveMQConnection;
import org.apache.activemq.ActiveMQConnectionFactory;
import org.apache.activemq.RedeliveryPolicy;

public class FailingJmsConsumer {
    public static void main(String[] args) throws Exception {
        String queue = args[0];
        int maxRedeliveries = Integer.parseInt(args[1]);
        ActiveMQConnection connection = (ActiveMQConnection) new ActiveMQConnectionFactory(System.getProperty("broker", "tcp://127.0.0.1:61616")).createConnection();
        RedeliveryPolicy policy = connection.getRedeliveryPolicy();
        policy.setMaximumRedeliveries(maxRedeliveries);
        policy.setInitialRedeliveryDelay(0);
        policy.setRedeliveryDelay(0);
        connection.start();
        Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
        CountDownLatch deliveries = new CountDownLatch(maxRedeliveries + 1);
        MessageConsumer consumer = session.createConsumer(session.createQueue(queue));
        consumer.setMessageListener(message -> {
            deliveries.countDown();
            throw new java.lang.IllegalStateException("order 12 has no customer");
        });
        boolean all = deliveries.await(20, TimeUnit.SECONDS);
        Thread.sleep(500);
        connection.close();
        System.out.println(all ? "failed all deliveries" : "missing deliveries");
    }
}
