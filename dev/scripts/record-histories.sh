#!/usr/bin/env bash
# record-histories.sh VERSION records a history of every workflow type from
# real runs of this checkout's code (the end-to-end tests that record, on
# the dev chain and an embedded Temporal server, with one whose payment
# waits for its session's workflow to start, which the recorded chainwatch
# history then holds) into workflows/testdata/releases/VERSION, and pins
# the files in SHA256SUMS.
# Run it on the commit being released; commit the folder with it. From then
# on every later change must replay them (go test ./workflows), so a
# deploy never strands the executions that release left running.
set -euo pipefail
release=${1:?usage: dev/scripts/record-histories.sh VERSION   (the version being released, later than the recorded ones: v0.1.0, v0.2.0, ...)}
cd "$(dirname "$0")/../.."
if ! [[ $release =~ ^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$ ]]; then
	echo "bad release name: $release (a version: v0.1.0)" >&2
	exit 2
fi
dir=workflows/testdata/releases/$release
if [ -e "$dir" ]; then
	echo "$dir exists: a release's histories are recorded once, never again" >&2
	exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
RECORD_HISTORIES="$tmp" go test ./tests/e2e -count=1 -run \
	'^(TestPayInDevToken|TestHashSubmittedBeforeTheNodeSawItCountsWhenMined|TestOneTransactionPaysTwoSessionsAndOneOfThemTwice|TestARescanRunTwiceCountsEachTransferOnce|TestWebhooksDeliverAPaymentsEvents|TestAFailedFirstAttemptIsRetriedByItsWorkflow|TestAcceptAnUnderpayment|TestAssignAnUnexpectedTransfer|TestEngineDatabaseRestoredFromABackup|TestPaymentToASessionNotStartedYet|TestARefundIsClaimedSignedOfflineAndFollowedToFinalized)$'
mkdir -p "$dir"
cp "$tmp"/*.json "$dir"/
(cd workflows/testdata/releases && sha256sum "$release"/*.json >> SHA256SUMS)
go test ./workflows -count=1 -run 'TestReplayRecordedHistories|TestRecordedHistoriesAreNeverRewritten'
echo "recorded $(ls "$dir" | wc -l) histories in $dir; commit it with SHA256SUMS"
