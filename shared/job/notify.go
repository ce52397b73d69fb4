package job

// Notify asks for the job's end to be announced: a signed POST of the job
// summary to Webhook and/or a message on the stack's notification topic.
type Notify struct {
	Webhook string `json:"webhook,omitempty"`
	SNS     bool   `json:"sns,omitempty"`
}

// Empty reports whether n asks for nothing.
func (n *Notify) Empty() bool { return n == nil || (n.Webhook == "" && !n.SNS) }
