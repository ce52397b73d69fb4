package pricing

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Product is one GetProducts document (FormatVersion aws_v1) as the
// classifier reads it: the product's attributes and its on-demand price
// dimensions.
type Product struct {
	ServiceCode string
	SKU         string
	Attributes  map[string]string
	Dimensions  []Dimension
}

// Dimension is one on-demand price dimension of a product.
type Dimension struct {
	RateCode    string
	Unit        string
	Description string
	BeginRange  string
	EndRange    string
	USD         float64
	// EffectiveDate is the term's effectiveDate (RFC 3339 as sent).
	EffectiveDate string
}

// rawProduct is the document's JSON; only the fields read are declared.
type rawProduct struct {
	Product struct {
		SKU        string          `json:"sku"`
		Attributes json.RawMessage `json:"attributes"`
	} `json:"product"`
	ServiceCode string `json:"serviceCode"`
	Terms       struct {
		OnDemand map[string]struct {
			EffectiveDate   string `json:"effectiveDate"`
			PriceDimensions map[string]struct {
				RateCode     string            `json:"rateCode"`
				Unit         string            `json:"unit"`
				Description  string            `json:"description"`
				BeginRange   string            `json:"beginRange"`
				EndRange     string            `json:"endRange"`
				PricePerUnit map[string]string `json:"pricePerUnit"`
			} `json:"priceDimensions"`
		} `json:"OnDemand"`
	} `json:"terms"`
}

// ParseProduct reads one PriceList document. A dimension without a USD
// price, or with one that is not a number, is an error: a price read as 0
// would be worse than none.
func ParseProduct(doc string) (Product, error) {
	var raw rawProduct
	if err := json.Unmarshal([]byte(doc), &raw); err != nil {
		return Product{}, fmt.Errorf("price list product: %w", err)
	}
	p := Product{ServiceCode: raw.ServiceCode, SKU: raw.Product.SKU, Attributes: map[string]string{}}
	if len(raw.Product.Attributes) > 0 {
		var attrs map[string]any
		if err := json.Unmarshal(raw.Product.Attributes, &attrs); err != nil {
			return Product{}, fmt.Errorf("price list product %s: attributes: %w", p.SKU, err)
		}
		for k, v := range attrs {
			if s, ok := v.(string); ok {
				p.Attributes[k] = s
			}
		}
	}
	if p.ServiceCode == "" {
		p.ServiceCode = p.Attributes["servicecode"] // a trimmed document may keep only the attribute
	}
	for _, term := range raw.Terms.OnDemand {
		for code, d := range term.PriceDimensions {
			usd, ok := d.PricePerUnit["USD"]
			if !ok {
				return Product{}, fmt.Errorf("price list product %s: dimension %s: no USD price", p.SKU, code)
			}
			v, err := strconv.ParseFloat(usd, 64)
			if err != nil {
				return Product{}, fmt.Errorf("price list product %s: dimension %s: price %q: %w", p.SKU, code, usd, err)
			}
			rc := d.RateCode
			if rc == "" {
				rc = code
			}
			p.Dimensions = append(p.Dimensions, Dimension{RateCode: rc, Unit: d.Unit, Description: d.Description,
				BeginRange: d.BeginRange, EndRange: d.EndRange, USD: v, EffectiveDate: term.EffectiveDate})
		}
	}
	sort.Slice(p.Dimensions, func(i, j int) bool { return p.Dimensions[i].RateCode < p.Dimensions[j].RateCode })
	return p, nil
}

// editionSuffix ends the servicename of a Marketplace model on Bedrock.
const editionSuffix = "(Amazon Bedrock Edition)"

// ModelName is the model a product prices: the servicename without its
// edition suffix on AmazonBedrockFoundationModels, the model (or
// titanModel) attribute on AmazonBedrock; "" when the product names none.
func (p Product) ModelName() string {
	if p.ServiceCode == ServiceFoundationModels || strings.HasSuffix(p.Attributes["servicename"], editionSuffix) {
		return strings.TrimSpace(strings.TrimSuffix(p.Attributes["servicename"], editionSuffix))
	}
	if m := strings.TrimSpace(p.Attributes["model"]); m != "" {
		return m
	}
	return strings.TrimSpace(p.Attributes["titanModel"])
}
