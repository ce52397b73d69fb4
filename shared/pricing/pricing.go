// Package pricing reads Bedrock's prices from the AWS Price List Query API
// (GetProducts) for the daily refresh of the account's facts: the products
// of service codes AmazonBedrock (Nova, Titan, open-weight and older Claude
// models, named by the model / titanModel attributes) and
// AmazonBedrockFoundationModels (the newer Claude models, named by
// servicename, "Claude Sonnet 4.6 (Amazon Bedrock Edition)"), filtered by
// the deployment's Region. Each price dimension is classified from its usage
// type and description (classify.go) and normalized to USD per million
// tokens with its effective date; a dimension the classifier cannot place
// is reported, never priced.
package pricing

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdk "github.com/aws/aws-sdk-go-v2/service/pricing"
	"github.com/aws/aws-sdk-go-v2/service/pricing/types"
)

// Service codes of Bedrock's prices in the Price List.
const (
	ServiceBedrock          = "AmazonBedrock"
	ServiceFoundationModels = "AmazonBedrockFoundationModels"
)

// ProductsAPI is the Price List call the refresh makes.
type ProductsAPI interface {
	GetProducts(ctx context.Context, in *sdk.GetProductsInput, optFns ...func(*sdk.Options)) (*sdk.GetProductsOutput, error)
}

var _ ProductsAPI = (*sdk.Client)(nil)

// The Regions the Price List Query API answers in, whatever Region the
// prices are for: us-east-1, eu-central-1 and ap-south-1 (AWS Billing User
// Guide, "Using the AWS Price List Query API",
// https://docs.aws.amazon.com/awsaccountbilling/latest/aboutv2/using-price-list-query-api.html;
// as issue 25 quotes it, 2026-12).
const (
	endpointUS   = "us-east-1"
	endpointEU   = "eu-central-1"
	endpointAsia = "ap-south-1"
)

// EndpointRegion is the Price List endpoint nearest to a deployment Region:
// Europe, the Middle East, Africa and Israel read eu-central-1, Asia Pacific
// ap-south-1, the Americas (and anything else) us-east-1.
func EndpointRegion(region string) string {
	switch {
	case strings.HasPrefix(region, "eu-"), strings.HasPrefix(region, "me-"), strings.HasPrefix(region, "af-"), strings.HasPrefix(region, "il-"):
		return endpointEU
	case strings.HasPrefix(region, "ap-"):
		return endpointAsia
	}
	return endpointUS
}

// DefaultPageSize is GetProducts' MaxResults (the API's maximum is 100).
const DefaultPageSize = 100

// maxPages bounds one service code's pagination: a NextToken that never
// ends is an error, not a hang (AmazonBedrock lists about a thousand
// products per Region: ten pages).
const maxPages = 1000

// Reader pages through GetProducts.
type Reader struct {
	API      ProductsAPI
	PageSize int32
}

// Products reads every product of serviceCode whose regionCode is region,
// each document parsed (a document that does not parse fails the read: it
// would hide prices).
func (r *Reader) Products(ctx context.Context, serviceCode, region string) ([]Product, error) {
	size := r.PageSize
	if size <= 0 {
		size = DefaultPageSize
	}
	in := &sdk.GetProductsInput{
		ServiceCode:   aws.String(serviceCode),
		FormatVersion: aws.String("aws_v1"),
		MaxResults:    aws.Int32(size),
		Filters:       []types.Filter{{Type: types.FilterTypeTermMatch, Field: aws.String("regionCode"), Value: aws.String(region)}},
	}
	var out []Product
	for page := 0; ; page++ {
		if page == maxPages {
			return nil, fmt.Errorf("pricing GetProducts %s %s: still paginating after %d pages", serviceCode, region, maxPages)
		}
		resp, err := r.API.GetProducts(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("pricing GetProducts %s %s: %w", serviceCode, region, err)
		}
		for i, doc := range resp.PriceList {
			p, err := ParseProduct(doc)
			if err != nil {
				return nil, fmt.Errorf("pricing GetProducts %s %s: page %d, product %d: %w", serviceCode, region, page+1, i, err)
			}
			p.ServiceCode = serviceCode // the code asked for, whatever the document repeats
			out = append(out, p)
		}
		if resp.NextToken == nil || *resp.NextToken == "" {
			return out, nil
		}
		in.NextToken = resp.NextToken
	}
}
