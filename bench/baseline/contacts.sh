#!/usr/bin/env bash
# The serial shell loop a user would write instead of `prospect contacts`: 100 domains per call (the
# most the service takes), one call at a time, jq to CSV. No splitting of a call that filled the
# limit, no retries, no freshness.
#
#   BASE_URL=http://127.0.0.1:4010 API_KEY=sandbox-growth bench/baseline/contacts.sh 1000 < domains.txt > contacts.csv
set -euo pipefail
limit="${1:-1000}"
: "${BASE_URL:?set BASE_URL}" "${API_KEY:?set API_KEY}"

echo 'domain,full_name,title,seniority,business_email,business_email_last_seen'
while mapfile -t -n 100 batch && ((${#batch[@]})); do
  domains="$(IFS=,; echo "${batch[*]}")"
  curl -sSf -G "$BASE_URL/api/v1/contacts" -H "Authorization: Bearer $API_KEY" \
    --data-urlencode "domain=$domains" --data-urlencode "limit=$limit" |
    jq -r '.data[] | [.domain, .full_name, .title, .seniority, .business_email, .business_email_last_seen] | @csv'
done
