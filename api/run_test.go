package api

import (
	"context"
	"strings"
	"testing"
)

// A REDIS_URL that is wrong or names no server stops the API's start,
// naming the variable and not the password.
func TestOpenRedisRefusesABadURL(t *testing.T) {
	for _, url := range []string{"http://cache:6379", "redis://:s3cret@cache:port", "redis://:s3cret@127.0.0.1:1/0?dial_timeout=200ms&max_retries=-1"} {
		client, err := openRedis(context.Background(), url)
		if err == nil {
			_ = client.Close()
			t.Fatalf("openRedis(%q): no error", url)
		}
		if !strings.HasPrefix(err.Error(), "REDIS_URL: ") || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("openRedis(%q): %v; want an error naming REDIS_URL without the password", url, err)
		}
	}
}
