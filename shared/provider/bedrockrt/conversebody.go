package bedrockrt

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
)

// converseJSON is the part of a Converse request body (the REST shape, as a
// Converse batch line's modelInput carries it) that runs on demand: messages
// of text, image and document blocks, system text, inferenceConfig. Any other
// member (toolConfig, additionalModelRequestFields, guardrailConfig, ...) is
// refused by name rather than dropped.
type converseJSON struct {
	Messages []struct {
		Role    string `json:"role"`
		Content []struct {
			Text  *string `json:"text,omitempty"`
			Image *struct {
				Format string `json:"format"`
				Source struct {
					Bytes []byte `json:"bytes"`
				} `json:"source"`
			} `json:"image,omitempty"`
			Document *struct {
				Format string `json:"format"`
				Name   string `json:"name"`
				Source struct {
					Bytes []byte `json:"bytes"`
				} `json:"source"`
				Citations *struct {
					Enabled bool `json:"enabled"`
				} `json:"citations,omitempty"`
			} `json:"document,omitempty"`
		} `json:"content"`
	} `json:"messages"`
	System []struct {
		Text string `json:"text"`
	} `json:"system,omitempty"`
	InferenceConfig *struct {
		MaxTokens     *int32   `json:"maxTokens,omitempty"`
		Temperature   *float32 `json:"temperature,omitempty"`
		TopP          *float32 `json:"topP,omitempty"`
		StopSequences []string `json:"stopSequences,omitempty"`
	} `json:"inferenceConfig,omitempty"`
}

// converseBody turns a caller's Converse request body into the SDK's input.
func converseBody(model string, body []byte) (*bedrockruntime.ConverseInput, error) {
	var c converseJSON
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("model_input: a Converse request on demand takes messages (text, image, document), system and inferenceConfig: %v", err)
	}
	req := &bedrockruntime.ConverseInput{ModelId: aws.String(model)}
	for i, m := range c.Messages {
		msg := types.Message{Role: types.ConversationRole(m.Role)}
		for j, b := range m.Content {
			switch {
			case b.Text != nil:
				msg.Content = append(msg.Content, &types.ContentBlockMemberText{Value: *b.Text})
			case b.Image != nil:
				msg.Content = append(msg.Content, &types.ContentBlockMemberImage{Value: types.ImageBlock{
					Format: types.ImageFormat(b.Image.Format), Source: &types.ImageSourceMemberBytes{Value: b.Image.Source.Bytes}}})
			case b.Document != nil:
				d := types.DocumentBlock{Format: types.DocumentFormat(b.Document.Format), Name: aws.String(b.Document.Name),
					Source: &types.DocumentSourceMemberBytes{Value: b.Document.Source.Bytes}}
				if b.Document.Citations != nil {
					d.Citations = &types.CitationsConfig{Enabled: aws.Bool(b.Document.Citations.Enabled)}
				}
				msg.Content = append(msg.Content, &types.ContentBlockMemberDocument{Value: d})
			default:
				return nil, fmt.Errorf("model_input.messages[%d].content[%d]: want a text, image or document block", i, j)
			}
		}
		req.Messages = append(req.Messages, msg)
	}
	for _, s := range c.System {
		req.System = append(req.System, &types.SystemContentBlockMemberText{Value: s.Text})
	}
	if ic := c.InferenceConfig; ic != nil {
		req.InferenceConfig = &types.InferenceConfiguration{MaxTokens: ic.MaxTokens, Temperature: ic.Temperature, TopP: ic.TopP, StopSequences: ic.StopSequences}
	}
	return req, nil
}
