package payment

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// Limits of a checkout session's metadata, a free-form JSON object.
const (
	MaxMetadataBytes       = 8192 // the object serialized
	MaxMetadataDepth       = 5    // the object itself is depth 1
	MaxMetadataKeys        = 50   // in any one object
	MaxMetadataKeyLength   = 40
	MaxMetadataValueLength = 500 // a string value
)

// EmptyMetadata is the metadata of a session created without any.
var EmptyMetadata = json.RawMessage(`{}`)

// CheckMetadata checks a session's metadata, decoded from JSON with
// json.Number numbers (nil when absent), and returns it serialized: the
// same content, numbers exactly as sent, keys sorted. Each problem names
// its field by JSON path (metadata.order.items[2]).
func CheckMetadata(v any, probs *Problems) json.RawMessage {
	if v == nil {
		return EmptyMetadata
	}
	if _, ok := v.(map[string]any); !ok {
		probs.Add("metadata", "must be a JSON object")
		return nil
	}
	n := len(*probs)
	checkMetadataValue(v, "metadata", 1, probs)
	if len(*probs) > n {
		return nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		probs.Add("metadata", "must be JSON")
		return nil
	}
	if len(raw) > MaxMetadataBytes {
		probs.Addf("metadata", "must be at most %d bytes serialized", MaxMetadataBytes)
		return nil
	}
	return raw
}

func checkMetadataValue(v any, path string, depth int, probs *Problems) {
	switch x := v.(type) {
	case map[string]any:
		if depth > MaxMetadataDepth {
			probs.Addf(path, "nests deeper than %d levels", MaxMetadataDepth)
			return
		}
		if len(x) > MaxMetadataKeys {
			probs.Addf(path, "must have at most %d keys", MaxMetadataKeys)
			return
		}
		for _, k := range sortedKeys(x) {
			if k == "" || utf8.RuneCountInString(k) > MaxMetadataKeyLength {
				probs.Addf(path+"."+k, "key must be 1 to %d characters", MaxMetadataKeyLength)
				continue
			}
			checkMetadataValue(x[k], path+"."+k, depth+1, probs)
		}
	case []any:
		if depth > MaxMetadataDepth {
			probs.Addf(path, "nests deeper than %d levels", MaxMetadataDepth)
			return
		}
		if len(x) > MaxMetadataKeys {
			probs.Addf(path, "must have at most %d items", MaxMetadataKeys)
			return
		}
		for i, e := range x {
			checkMetadataValue(e, path+"["+strconv.Itoa(i)+"]", depth+1, probs)
		}
	case string:
		if !utf8.ValidString(x) {
			probs.Add(path, "must be valid UTF-8")
		} else if utf8.RuneCountInString(x) > MaxMetadataValueLength {
			probs.Addf(path, "value must be at most %d characters", MaxMetadataValueLength)
		}
	case json.Number, bool, nil:
	default:
		probs.Add(path, "must be JSON") // a float64 would not be exact: decode with UseNumber
	}
}

// DecodeMetadata decodes metadata sent as JSON text (the Connect API's
// metadata_json) for CheckMetadata.
func DecodeMetadata(s string) (any, bool) {
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return nil, false
	}
	return v, true
}

// MetadataStrings returns the metadata's top-level string values: the
// Connect API's older map field, which has no room for the rest.
func MetadataStrings(raw json.RawMessage) map[string]string {
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	out := map[string]string{}
	for k, v := range m {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}
