package webhook

import (
	"errors"
	"net/netip"
	"testing"
)

// The classifier alone, over many more ranges than the client test can dial
// safely. No traffic is sent.
func TestForbiddenReason(t *testing.T) {
	forbidden := []string{
		"0.0.0.0", "0.1.2.3", "127.0.0.1", "127.255.255.254",
		"10.0.0.1", "10.255.255.255", "172.16.0.1", "172.31.255.255", "192.168.1.1",
		"100.64.0.1", "100.127.255.255",
		"169.254.169.254", "169.254.0.1",
		"192.0.0.192", "198.18.0.1", "224.0.0.1", "239.255.255.250", "240.0.0.1", "255.255.255.255",
		"::", "::1", "::127.0.0.1",
		"::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:169.254.169.254", "::ffff:0.0.0.0",
		"fc00::1", "fd00:ec2::254", "fe80::1", "fe80::1%eth0", "febf::1", "fec0::1",
		"ff02::1", "ff05::2", "100::1", "64:ff9b:1::1",
		"64:ff9b::7f00:1", "64:ff9b::a9fe:a9fe", // NAT64 of 127.0.0.1, 169.254.169.254
		"2002:7f00:1::1", "2002:a00:1::", // 6to4 of 127.0.0.1, 10.0.0.1
	}
	allowed := []string{
		"1.1.1.1", "8.8.8.8", "93.184.216.34", "172.15.255.255", "172.32.0.1",
		"100.63.255.255", "100.128.0.1", "169.253.255.255", "192.167.1.1", "11.0.0.1",
		"2606:4700:4700::1111", "2001:4860:4860::8888",
		"::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::1",
	}
	for _, s := range forbidden {
		if why := forbiddenReason(netip.MustParseAddr(s)); why == "" {
			t.Errorf("%s allowed, want forbidden", s)
		}
	}
	for _, s := range allowed {
		if why := forbiddenReason(netip.MustParseAddr(s)); why != "" {
			t.Errorf("%s forbidden (%s), want allowed", s, why)
		}
	}
	if why := forbiddenReason(netip.Addr{}); why == "" {
		t.Error("zero Addr allowed")
	}
}

func TestGuardDialFailsClosed(t *testing.T) {
	for _, addr := range []string{"", "example.com:80", "/run/some.sock", "127.0.0.1"} {
		if err := guardDial("tcp", addr, nil); !errors.Is(err, ErrForbiddenDestination) {
			t.Errorf("guardDial(%q) = %v, want ErrForbiddenDestination", addr, err)
		}
	}
	if err := guardDial("tcp4", "8.8.8.8:443", nil); err != nil {
		t.Errorf("guardDial(public) = %v", err)
	}
}
