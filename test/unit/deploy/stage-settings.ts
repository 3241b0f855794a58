/**
 * A stage's endpoint settings (docs/deploy.md section 3), as an operator exports them: the aws target refuses
 * to package without each one (plugins/aws-access). Shared by the deploy tests that package a stage.
 */
export const STAGE_SETTINGS = {
  NATS_URL: 'tls://nats.example.internal:4222',
  TORRENT_CLIENT_URL: 'https://qbt.example.internal',
  TBANK_API_URL: 'https://invest-public-api.tbank.ru',
  PUBLIC_UI_URL: 'https://tss.example.com',
  FILES_BUCKET: 'tss-prod-files-example',
  SCAN_SMB_SHARE: '//files.example.internal/scans/hotfolder',
};
