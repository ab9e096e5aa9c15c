resource sa 'Microsoft.Storage/storageAccounts@2023-01-01' = {
  name: 'data'
}
