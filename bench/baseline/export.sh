#!/usr/bin/env bash
# The shell loop a user would write instead of prospect: curl each page, jq it to CSV, follow
# next_cursor until there is none. Same columns as `prospect companies` (technology names joined
# with ";"), without prospect's checks (schema, formula guard, cursor loops, retries).
#
#   BASE_URL=http://127.0.0.1:4010 API_KEY=sandbox-growth bench/baseline/export.sh jQuery > out.csv
set -euo pipefail
technology="$1"
limit="${2:-1000}"
: "${BASE_URL:?set BASE_URL}" "${API_KEY:?set API_KEY}"
page="$(mktemp)"
trap 'rm -f "$page"' EXIT

echo 'domain,company_name,employee_range,industry,country,crux_rank,phone,linkedin_url,tech_count,technologies'
cursor=''
for ((n = 0; n < 100000; n++)); do
  curl -sSf -G "$BASE_URL/api/v1/companies" -H "Authorization: Bearer $API_KEY" \
    --data-urlencode "technology=$technology" --data-urlencode "limit=$limit" \
    ${cursor:+--data-urlencode "cursor=$cursor"} -o "$page"
  jq -r '.data[] | [.domain, .company_name, .employee_range, .industry, .country, .crux_rank, .phone, .linkedin_url, .tech_count, ([.technologies[].t] | join(";"))] | @csv' "$page"
  cursor="$(jq -r '.next_cursor // empty' "$page")"
  [ -z "$cursor" ] && break
done
