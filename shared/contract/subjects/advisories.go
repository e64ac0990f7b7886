package subjects

// maxDeliveriesAdvisoryPrefix is where the NATS server announces a message
// that used up its consumer's MaxDeliver without being acknowledged (see
// nats-server's JSAdvisoryConsumerMaxDeliveryExceedPre).
const maxDeliveriesAdvisoryPrefix = "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES"

// MaxDeliveriesAdvisory is the subject of the server's advisory for one
// durable consumer's messages that reached MaxDeliver.
func MaxDeliveriesAdvisory(stream, durable string) string {
	return maxDeliveriesAdvisoryPrefix + "." + stream + "." + durable
}
