package ratelimit

// StartRedis is startRedis for the tests of package ratelimit_test.
var StartRedis = startRedis
