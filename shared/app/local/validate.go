package local

import (
	"context"

	"github.com/aws/aws-lambda-go/events"

	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/handler"
)

// addValidate routes "Input Validation Requested" to the handler the validate
// Lambda runs, as the project bus rule does in AWS.
func (l *Suite) addValidate(o Options) {
	if l.Router.Others == nil {
		l.Router.Others = map[string]func(context.Context, events.CloudWatchEvent) error{}
	}
	v := &handler.Validate{Svc: l.Service.Transfer, Log: o.Log}
	l.Router.Others[config.EventSource+"|"+config.DetailInputValidation] = v.Handle
	l.addFanout(o)
}
